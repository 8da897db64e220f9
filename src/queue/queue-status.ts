import { settlesWithin, untilAborted } from '../abort.js';
import type { Logger } from '../logger.js';
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
 * The queue counts read from the Redis at `url`, or the one secret-free line saying why they could
 * not be read (credentials refused, unreachable after a few attempts): `status` still shows the
 * database state while Redis is down. A `signal` abort rejects with its reason.
 */
export async function readQueueStatus(
  url: string,
  options: {
    prefix?: string | undefined;
    logger?: Logger | undefined;
    signal?: AbortSignal | undefined;
  } = {},
): Promise<{ queues: QueueCounts[] } | { error: string }> {
  const { COMMAND_CONNECT_ATTEMPTS, openRedis } = await import('./connection.js');
  const { createLedgerQueues } = await import('./queues.js');
  const { redisFailureLine } = await import('./redis-failures.js');
  const redis = openRedis(url, 'producer', {
    logger: options.logger,
    connectAttempts: COMMAND_CONNECT_ATTEMPTS,
  });
  let queues: LedgerQueues | undefined;
  try {
    await redis.ready(options.signal);
    queues = createLedgerQueues({
      connection: redis.connection,
      prefix: options.prefix,
      onError: redis.report,
    });
    return { queues: await untilAborted(queueStatus(queues), options.signal) };
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    return { error: redisFailureLine(error, url) };
  } finally {
    if (queues) await settlesWithin(queues.close(), 1000);
    redis.connection.disconnect();
  }
}

/** The queue counts as lines of text, for `status`. */
export function formatQueueStatus(result: { queues: QueueCounts[] } | { error: string }): string[] {
  if ('error' in result) return [`queues: unavailable (${result.error})`];
  return result.queues.map(
    (q) =>
      `queue ${q.queue}: ${q.waiting} waiting, ${q.delayed} delayed, ${q.active} active, ${q.failed} failed${q.paused ? ' (paused)' : ''}`,
  );
}
