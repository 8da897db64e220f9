/**
 * The HTTP ceiling: every page fetched and parsed at the indexer's concurrency, the records
 * thrown away. No database, no validation: the most any indexer could get out of the service.
 */
import { Pool } from 'undici';
import { type ThroughputRun, throughput } from './figures.js';

export async function runHttpCeiling(input: {
  baseUrl: string;
  concurrency: number;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const origin = new URL(input.baseUrl);
  const prefix = origin.pathname.replace(/\/$/, '');
  const pool = new Pool(origin.origin, { connections: input.concurrency, keepAliveTimeout: 30_000 });
  const fetchPage = async (page: number): Promise<{ totalPages: number; records: number }> => {
    const response = await pool.request({ method: 'GET', path: `${prefix}/txs?page=${page}` });
    if (response.statusCode !== 200)
      throw new Error(`HTTP ceiling: HTTP ${response.statusCode} on page ${page}`);
    const body = JSON.parse(await response.body.text()) as { totalPages: number; txs: unknown[] | null };
    return { totalPages: body.totalPages, records: body.txs?.length ?? 0 };
  };
  const started = performance.now();
  let pages = 0;
  try {
    const first = await fetchPage(1);
    pages += 1;
    let records = first.records;
    let next = 2;
    const lane = async (): Promise<void> => {
      while (next <= first.totalPages) {
        const page = next++;
        const result = await fetchPage(page);
        pages += 1;
        records += result.records;
      }
    };
    await Promise.all(Array.from({ length: input.concurrency }, lane));
    return throughput({
      label: `HTTP ceiling: fetch + JSON.parse of every page, ${input.concurrency} at once, records discarded`,
      rows: records,
      expectedRows: input.expectedRows,
      wallMs: performance.now() - started,
      pagesRequested: pages,
      peakRssBytes: null,
    });
  } finally {
    await pool.close();
  }
}
