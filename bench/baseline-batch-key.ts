/**
 * THE HAND-WRITTEN BATCH SCRIPT, BY KEY: what a user writes with the deployed service's
 * dialect, as its own clients read it. The list is walked oldest first
 * (`/txs?cursor=<last rawId>&order=asc&count=100`, one request in flight: each cursor is the
 * last rawId of the answer before), and every 16 answers are written by one
 * `INSERT … SELECT FROM unnest(...) ON CONFLICT (raw_id) DO UPDATE` while the next 16 are read.
 * The same table as the page-number script (`bench/baseline-batch.ts`): primary key and unique
 * hash only; no checkpoint, no history, no check. Not used by the product.
 */
import pg from 'pg';
import { prepareScriptTable, SCRIPT_TABLE } from './baseline-batch.js';
import { type ThroughputRun, throughput } from './figures.js';
import { KEY_COUNT, keyPages } from './list-pages.js';
import type { WireRecord } from './row-encoding.js';

const ANSWERS_PER_INSERT = 16;

/** Runs the script against `baseUrl` into its own table in `databaseUrl` (migrated). */
export async function runKeyBatchBaseline(input: {
  baseUrl: string;
  databaseUrl: string;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const http = keyPages(input.baseUrl, 'batch script by key');
  const db = new pg.Client({ connectionString: input.databaseUrl });
  db.on('error', () => undefined);
  await db.connect();
  try {
    const insert = await prepareScriptTable(db);
    let cursor = 0;
    let more = true;
    let requests = 0;
    const readBatch = async (): Promise<WireRecord[]> => {
      const records: WireRecord[] = [];
      for (let i = 0; i < ANSWERS_PER_INSERT && more; i++) {
        const answer = await http.fetchAfter(cursor);
        requests++;
        records.push(...answer.txs);
        const last = answer.txs[answer.txs.length - 1];
        if (last !== undefined) cursor = last.rawId;
        more = answer.hasNextPage && last !== undefined;
      }
      return records;
    };
    const started = performance.now();
    let pending = readBatch();
    for (;;) {
      const records = await pending;
      const done = !more;
      // The next answers are read while this batch is written.
      if (!done) pending = readBatch();
      await insert(records);
      if (done) break;
    }
    const wallMs = performance.now() - started;
    const rows = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCRIPT_TABLE}`);
    return throughput({
      label: `batch script by key: count=${KEY_COUNT}, one request in flight, one INSERT … unnest … ON CONFLICT DO UPDATE per ${ANSWERS_PER_INSERT} answers`,
      rows: Number(rows.rows[0]?.n ?? 0),
      expectedRows: input.expectedRows,
      wallMs,
      pagesRequested: requests,
      peakRssBytes: null,
      listRequests: { key: requests, page: 0 },
    });
  } finally {
    await db.end();
    await http.close();
  }
}
