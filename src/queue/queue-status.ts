import type { LedgerQueues } from './queues.js';

/** Depth and activity of one queue. */
export interface QueueCounts {
  queue: string;
  /** Jobs waiting to run now (waiting + prioritized). */
  waiting: number;
  /** Jobs due later (retries in backoff, scheduled runs). */
  delayed: number;
  active: number;
  /** Failed jobs still kept (see `removeOnFail`). */
  failed: number;
  paused: boolean;
}

/** The counts of every ledger-indexer queue, for `status`. */
export async function queueStatus(queues: LedgerQueues): Promise<QueueCounts[]> {
  const result: QueueCounts[] = [];
  for (const queue of [queues.sync, queues.backfill]) {
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'failed');
    result.push({
      queue: queue.name,
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      delayed: counts.delayed ?? 0,
      active: counts.active ?? 0,
      failed: counts.failed ?? 0,
      paused: await queue.isPaused(),
    });
  }
  return result;
}
