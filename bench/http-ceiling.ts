/**
 * The HTTP ceiling: every page fetched and parsed at the indexer's concurrency, the records
 * thrown away. No database, no validation: the most any indexer could get out of the service.
 */

import { type ThroughputRun, throughput } from './figures.js';
import { listPages } from './list-pages.js';

export async function runHttpCeiling(input: {
  baseUrl: string;
  concurrency: number;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const pool = listPages(input.baseUrl, input.concurrency, 'HTTP ceiling');
  const fetchPage = async (page: number): Promise<{ totalPages: number; records: number }> => {
    const { totalPages, txs } = await pool.fetchPage(page);
    return { totalPages, records: txs.length };
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
