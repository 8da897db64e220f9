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

/**
 * The queue counts read from the Redis at `url`, or the reason they could not be read: `status`
 * shows the database state even while Redis is down.
 */
export async function readQueueStatus(
  url: string,
  options: { prefix?: string | undefined; timeoutMs?: number } = {},
): Promise<{ queues: QueueCounts[] } | { error: string }> {
  const { Redis } = await import('ioredis');
  const { createLedgerQueues } = await import('./queues.js');
  const connection = new Redis(url, {
    maxRetriesPerRequest: 1,
    connectTimeout: options.timeoutMs ?? 3000,
    retryStrategy: () => null,
  });
  connection.on('error', () => undefined);
  const queues = createLedgerQueues({ connection, prefix: options.prefix });
  try {
    return { queues: await queueStatus(queues) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    await queues.close().catch(() => undefined);
    connection.disconnect();
  }
}

/** The queue counts as lines of text, for `status`. */
export function formatQueueStatus(result: { queues: QueueCounts[] } | { error: string }): string[] {
  if ('error' in result) return [`queues: unreachable (${result.error})`];
  return result.queues.map(
    (q) =>
      `queue ${q.queue}: ${q.waiting} waiting, ${q.delayed} delayed, ${q.active} active, ${q.failed} failed${q.paused ? ' (paused)' : ''}`,
  );
}
