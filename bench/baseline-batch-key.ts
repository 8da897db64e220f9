/**
 * THE HAND-WRITTEN BATCH SCRIPT, BY KEY: what a competent user writes with the deployed service's
 * dialect in an afternoon. It reads the newest rawId (`/txs?order=desc&count=1`), splits 0..head
 * into {@link KEY_SCRIPT_RANGES} even rawId ranges and walks them at once, each oldest first
 * (`/txs?cursor=<last rawId>&order=asc&count=100`, its own kept-alive connection, the count cut
 * to what is left of its range), writing every 16 answers of a range with one
 * `INSERT … SELECT FROM unnest(...) ON CONFLICT (raw_id) DO UPDATE` over a pool while that range
 * reads its next 16. The same table as the page-number script (`bench/baseline-batch.ts`):
 * primary key and unique hash only; no checkpoint, no history, no check. Not used by the product.
 */
import pg from 'pg';
import { prepareScriptTable, SCRIPT_TABLE } from './baseline-batch.js';
import { type ThroughputRun, throughput } from './figures.js';
import { KEY_COUNT, keyPages } from './list-pages.js';
import type { WireRecord } from './row-encoding.js';

const ANSWERS_PER_INSERT = 16;
/** Ranges walked at once: what a script written in an afternoon would pick. */
export const KEY_SCRIPT_RANGES = 4;

/** Runs the script against `baseUrl` into its own table in `databaseUrl` (migrated). */
export async function runKeyBatchBaseline(input: {
  baseUrl: string;
  databaseUrl: string;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const walkers = Array.from({ length: KEY_SCRIPT_RANGES }, (_, i) =>
    keyPages(input.baseUrl, `batch script by key, range ${i + 1}`),
  );
  const db = new pg.Pool({ connectionString: input.databaseUrl, max: KEY_SCRIPT_RANGES });
  db.on('error', () => undefined);
  try {
    const insert = await prepareScriptTable(db);
    const started = performance.now();
    const head = await walkers[0]!.newest();
    let requests = 1;
    const width = Math.ceil((head ?? 0) / KEY_SCRIPT_RANGES);
    const walkRange = async (http: (typeof walkers)[number], from: number, to: number) => {
      let cursor = from;
      let more = cursor < to;
      const readBatch = async (): Promise<WireRecord[]> => {
        const records: WireRecord[] = [];
        for (let i = 0; i < ANSWERS_PER_INSERT && more; i++) {
          const answer = await http.fetchAfter(cursor, Math.min(KEY_COUNT, to - cursor));
          requests++;
          const last = answer.txs[answer.txs.length - 1];
          records.push(...answer.txs.filter((tx) => tx.rawId <= to));
          if (last !== undefined) cursor = last.rawId;
          more = answer.hasNextPage && last !== undefined && cursor < to;
        }
        return records;
      };
      let pending = readBatch();
      for (;;) {
        const records = await pending;
        const done = !more;
        // The next answers of this range are read while this batch is written.
        if (!done) pending = readBatch();
        await insert(records);
        if (done) break;
      }
    };
    // The top range is open: it reads on to the end of the list.
    await Promise.all(
      walkers.map((http, i) =>
        walkRange(http, i * width, i === walkers.length - 1 ? Number.MAX_SAFE_INTEGER : (i + 1) * width),
      ),
    );
    const wallMs = performance.now() - started;
    const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCRIPT_TABLE}`);
    return throughput({
      label: `batch script by key: ${KEY_SCRIPT_RANGES} rawId ranges at once from the head, count=${KEY_COUNT}, one INSERT … unnest … ON CONFLICT DO UPDATE per ${ANSWERS_PER_INSERT} answers of a range`,
      rows: Number(rows.rows[0]?.n ?? 0),
      expectedRows: input.expectedRows,
      wallMs,
      pagesRequested: requests,
      peakRssBytes: null,
      listRequests: { key: requests, page: 0 },
    });
  } finally {
    await db.end();
    await Promise.all(walkers.map((http) => http.close()));
  }
}
