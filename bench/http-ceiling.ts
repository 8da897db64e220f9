/**
 * The HTTP ceiling: every page fetched and parsed at the indexer's concurrency, the records
 * thrown away. No database, no validation: the most any indexer could get out of the service.
 */

import { type ThroughputRun, throughput } from './figures.js';
import { KEY_COUNT, keyPages, listPages } from './list-pages.js';

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

/**
 * The HTTP ceiling by key: the list walked oldest first, `count=100`, one request in flight (the
 * next cursor is the last rawId of the answer before), parsed, the records thrown away.
 */
export async function runKeyHttpCeiling(input: {
  baseUrl: string;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const http = keyPages(input.baseUrl, 'HTTP ceiling by key');
  const started = performance.now();
  let requests = 0;
  let records = 0;
  try {
    for (let cursor = 0, more = true; more; ) {
      const answer = await http.fetchAfter(cursor);
      requests++;
      records += answer.txs.length;
      const last = answer.txs[answer.txs.length - 1];
      if (last !== undefined) cursor = last.rawId;
      more = answer.hasNextPage && last !== undefined;
    }
    return throughput({
      label: `HTTP ceiling by key: fetch + JSON.parse of every answer, count=${KEY_COUNT}, one at a time, records discarded`,
      rows: records,
      expectedRows: input.expectedRows,
      wallMs: performance.now() - started,
      pagesRequested: requests,
      peakRssBytes: null,
      listRequests: { key: requests, page: 0 },
    });
  } finally {
    await http.close();
  }
}
