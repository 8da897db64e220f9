/**
 * THE HAND-WRITTEN BASELINE: what a user would write instead of ledger-indexer. A sequential
 * loop over pages 1..totalPages; each record inserted by its own
 * `INSERT … ON CONFLICT DO NOTHING`, one after the other. Written fairly: a keep-alive HTTP
 * connection (undici) and a pg pool, so no connection is ever opened twice. Not used by the product.
 */
import pg from 'pg';
import { Agent, request } from 'undici';
import { type ThroughputRun, throughput } from './figures.js';
import { encodeRow, TX_COLUMNS, type WireRecord } from './row-encoding.js';

const INSERT = `INSERT INTO ledger_transactions (${TX_COLUMNS.join(', ')}) VALUES (${TX_COLUMNS.map(
  (_, i) => `$${i + 1}`,
).join(', ')}) ON CONFLICT DO NOTHING`;

/**
 * Runs the baseline against `baseUrl` into `databaseUrl`, stopping after `budgetMs` (its rate
 * is then that of the leading slice of pages it got through).
 */
export async function runBaseline(input: {
  baseUrl: string;
  databaseUrl: string;
  budgetMs: number;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
  const pool = new pg.Pool({ connectionString: input.databaseUrl, max: 4 });
  // An idle connection ended by the database's drop must not crash the harness.
  pool.on('error', () => undefined);
  const started = performance.now();
  let page = 1;
  let totalPages = 1;
  let fetched = 0;
  try {
    while (page <= totalPages) {
      const response = await request(`${input.baseUrl}/txs?page=${page}`, { dispatcher: agent });
      if (response.statusCode !== 200)
        throw new Error(`baseline: HTTP ${response.statusCode} on page ${page}`);
      const body = (await response.body.json()) as { totalPages: number; txs: WireRecord[] | null };
      totalPages = body.totalPages;
      const now = new Date().toISOString();
      for (const tx of body.txs ?? []) await pool.query(INSERT, encodeRow(tx, now));
      fetched += body.txs?.length ?? 0;
      page += 1;
      if (performance.now() - started > input.budgetMs) break;
    }
    const wallMs = performance.now() - started;
    const rows = await pool.query<{ n: string }>('SELECT count(*)::text AS n FROM ledger_transactions');
    const pagesDone = page - 1;
    const complete = pagesDone >= totalPages;
    return throughput({
      label: 'baseline: hand-written sequential loop, one INSERT … ON CONFLICT DO NOTHING per record',
      rows: Number(rows.rows[0]?.n ?? 0),
      expectedRows: complete ? input.expectedRows : fetched,
      wallMs,
      pagesRequested: pagesDone,
      peakRssBytes: null,
      ...(complete ? {} : { slice: { pages: pagesDone, totalPages } }),
      ...(complete ? {} : { note: `leading slice of ${pagesDone} of ${totalPages} pages (time budget)` }),
    });
  } finally {
    await pool.end();
    await agent.close();
  }
}
