/**
 * The fetch-and-store ceiling: the least work any program can do to copy the service's list into
 * PostgreSQL on this machine, timed as a whole. Pages are fetched at the indexer's concurrency
 * and parsed, and each page's records go straight into one `COPY` stream (text format) into a
 * table of `ledger_transactions`' columns with no index and no key at all. No deduplication, no
 * checks, no transaction boundaries but the one: what the simulator, the HTTP client, the
 * encoding and PostgreSQL's heap inserts cost together, sharing the machine's cores, as every
 * backfill must. No backfill can beat it here; the ratio of a target to it says whether the
 * target can be met on this machine at all. Not used by the product.
 */
import { once } from 'node:events';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { type ThroughputRun, throughput } from './figures.js';
import { listPages } from './list-pages.js';
import { copyLine, encodeRow, TX_COLUMNS, type WireRecord } from './row-encoding.js';

const TABLE = 'ceiling_transactions';

/** Runs the ceiling against `baseUrl` into a table of its own in `databaseUrl` (migrated). */
export async function runPipelineCeiling(input: {
  baseUrl: string;
  databaseUrl: string;
  concurrency: number;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const http = listPages(input.baseUrl, input.concurrency, 'fetch-and-store ceiling');
  const db = new pg.Client({ connectionString: input.databaseUrl });
  db.on('error', () => undefined);
  await db.connect();
  try {
    await db.query(`CREATE TABLE ${TABLE} (LIKE ledger_transactions INCLUDING DEFAULTS)`);
    const { fetchPage } = http;
    const started = performance.now();
    const sink = db.query(copyFrom(`COPY ${TABLE} (${TX_COLUMNS.join(', ')}) FROM STDIN`));
    const done = once(sink, 'finish');
    const now = new Date().toISOString();
    const store = async (txs: WireRecord[]): Promise<void> => {
      let text = '';
      for (const tx of txs) text += copyLine(encodeRow(tx, now));
      if (!sink.write(text)) await once(sink, 'drain');
    };
    const first = await fetchPage(1);
    await store(first.txs);
    let next = 2;
    const lane = async (): Promise<void> => {
      while (next <= first.totalPages) {
        const page = next++;
        await store((await fetchPage(page)).txs);
      }
    };
    await Promise.all(Array.from({ length: input.concurrency }, lane));
    sink.end();
    await done;
    const wallMs = performance.now() - started;
    const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${TABLE}`);
    return throughput({
      label: `fetch-and-store ceiling: ${input.concurrency} pages in flight, every record into one COPY, table without indexes`,
      rows: Number(rows.rows[0]?.n ?? 0),
      expectedRows: input.expectedRows,
      wallMs,
      pagesRequested: first.totalPages,
      peakRssBytes: null,
    });
  } finally {
    await db.end();
    await http.close();
  }
}
