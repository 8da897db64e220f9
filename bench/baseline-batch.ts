/**
 * THE HAND-WRITTEN BATCH SCRIPT: the faster thing a competent user writes in an afternoon.
 * Pages are fetched 8 at a time (keep-alive pool), and every 16 pages are written by one
 * `INSERT … SELECT FROM unnest(...) ON CONFLICT (raw_id) DO UPDATE` while the next 16 are being
 * fetched. Its own table has the same columns but only the primary key and the unique hash:
 * no checkpoint, no history, no bundle items, no proof that nothing was skipped. Not used by the
 * product.
 */
import pg from 'pg';
import { type ThroughputRun, throughput } from './figures.js';
import { listPages } from './list-pages.js';
import { encodeRow, TX_COLUMNS, type WireRecord } from './row-encoding.js';

const PAGES_IN_FLIGHT = 8;
const PAGES_PER_INSERT = 16;
/** The scripts' own table. */
export const SCRIPT_TABLE = 'script_transactions';
const TABLE = SCRIPT_TABLE;

/** Runs the script against `baseUrl` into its own table in `databaseUrl` (migrated). */
export async function runBatchBaseline(input: {
  baseUrl: string;
  databaseUrl: string;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const http = listPages(input.baseUrl, PAGES_IN_FLIGHT, 'batch script');
  const db = new pg.Client({ connectionString: input.databaseUrl });
  db.on('error', () => undefined);
  await db.connect();
  try {
    const insert = await prepareScriptTable(db);
    const { fetchPage } = http;
    const fetchBatch = async (from: number, to: number): Promise<WireRecord[]> => {
      const pages: WireRecord[][] = [];
      let next = from;
      const lane = async (): Promise<void> => {
        while (next <= to) {
          const page = next++;
          pages[page - from] = (await fetchPage(page)).txs;
        }
      };
      await Promise.all(Array.from({ length: PAGES_IN_FLIGHT }, lane));
      return pages.flat();
    };
    const started = performance.now();
    const first = await fetchPage(1);
    const totalPages = first.totalPages;
    let pending = fetchBatch(2, Math.min(PAGES_PER_INSERT, totalPages)).then((rest) => [
      ...first.txs,
      ...rest,
    ]);
    for (let from = 1; from <= totalPages; from += PAGES_PER_INSERT) {
      const records = await pending;
      const nextFrom = from + PAGES_PER_INSERT;
      // The next batch is fetched while this one is written.
      pending =
        nextFrom <= totalPages
          ? fetchBatch(nextFrom, Math.min(nextFrom + PAGES_PER_INSERT - 1, totalPages))
          : Promise.resolve([]);
      await insert(records);
    }
    const wallMs = performance.now() - started;
    const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${TABLE}`);
    return throughput({
      label: `batch script: ${PAGES_IN_FLIGHT} pages in flight, one INSERT … unnest … ON CONFLICT DO UPDATE per ${PAGES_PER_INSERT} pages`,
      rows: Number(rows.rows[0]?.n ?? 0),
      expectedRows: input.expectedRows,
      wallMs,
      pagesRequested: totalPages,
      peakRssBytes: null,
      listRequests: { key: 0, page: totalPages },
    });
  } finally {
    await db.end();
    await http.close();
  }
}

/**
 * Creates the script's table (the columns of `ledger_transactions`, primary key and unique hash
 * only) and returns its batch insert: one text[] parameter per column, cast in SQL.
 */
export async function prepareScriptTable(
  db: pg.Client | pg.Pool,
): Promise<(records: WireRecord[]) => Promise<void>> {
  await db.query(`CREATE TABLE ${TABLE} (LIKE ledger_transactions INCLUDING DEFAULTS)`);
  await db.query(`ALTER TABLE ${TABLE} ADD PRIMARY KEY (raw_id), ADD UNIQUE (ledger_hash)`);
  const types = await db.query<{ name: string; type: string }>(
    `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
     WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
    [TABLE],
  );
  const typeOf = new Map(types.rows.map((r) => [r.name, r.type]));
  const unnest = TX_COLUMNS.map((_, i) => `$${i + 1}::text[]`).join(', ');
  const select = TX_COLUMNS.map((c) => `${c}::${typeOf.get(c) ?? 'text'}`).join(', ');
  const update = TX_COLUMNS.filter((c) => c !== 'raw_id' && c !== 'first_seen_at')
    .map((c) => `${c} = excluded.${c}`)
    .join(', ');
  const text = `INSERT INTO ${TABLE} (${TX_COLUMNS.join(', ')})
    SELECT ${select} FROM unnest(${unnest}) AS r(${TX_COLUMNS.join(', ')})
    ON CONFLICT (raw_id) DO UPDATE SET ${update}`;
  return async (records) => {
    if (records.length === 0) return;
    const now = new Date().toISOString();
    const columns: Array<Array<string | null>> = TX_COLUMNS.map(() => []);
    for (const record of records) {
      const row = encodeRow(record, now);
      for (let c = 0; c < row.length; c++) columns[c]?.push(row[c] ?? null);
    }
    await db.query(text, columns);
  };
}
