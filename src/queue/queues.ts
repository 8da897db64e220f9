import { FlowProducer, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOB_QUEUE, type JobName, type JobPayloads, QUEUE_NAMES, type QueueKey } from './jobs.js';

/** The key prefix of every BullMQ key of ledger-indexer. Tests use a unique one per file. */
export const DEFAULT_PREFIX = 'ledger-indexer';

/** Retries with backoff; finished jobs trimmed so Redis does not grow with history. */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { count: 1000, age: 24 * 3600 },
  removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
} as const;

/** The queues of one Redis, with a producer for parent/child job trees. */
export interface LedgerQueues {
  prefix: string;
  sync: Queue;
  backfill: Queue;
  flows: FlowProducer;
  /** Adds one job to its queue with the default options and `opts` on top. */
  add<N extends JobName>(
    name: N,
    data: JobPayloads[N],
    opts?: { jobId?: string; deduplicationId?: string; delay?: number },
  ): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the queues over `connection` (shared; closed by its owner, not here). Their `error`
 * events go to `onError` (a `RedisLink`'s `report`); without it they are dropped, since the
 * failing calls reject anyway, rather than printed raw with the AUTH command's password.
 */
export function createLedgerQueues(input: {
  connection: Redis;
  prefix?: string | undefined;
  onError?: ((error: unknown) => void) | undefined;
}): LedgerQueues {
  const prefix = input.prefix ?? DEFAULT_PREFIX;
  const options = { connection: input.connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS };
  const queues: Record<QueueKey, Queue> = {
    sync: new Queue(QUEUE_NAMES.sync, options),
    backfill: new Queue(QUEUE_NAMES.backfill, options),
  };
  const flows = new FlowProducer({ connection: input.connection, prefix });
  const onError = input.onError ?? (() => undefined);
  queues.sync.on('error', onError);
  queues.backfill.on('error', onError);
  flows.on('error', onError);
  return {
    prefix,
    ...queues,
    flows,
    async add(name, data, opts = {}) {
      await queues[JOB_QUEUE[name]].add(name, data, {
        ...(opts.jobId ? { jobId: opts.jobId } : {}),
        ...(opts.deduplicationId ? { deduplication: { id: opts.deduplicationId } } : {}),
        ...(opts.delay ? { delay: opts.delay } : {}),
      });
    },
    async close() {
      await Promise.all([queues.sync.close(), queues.backfill.close(), flows.close()]);
    },
  };
}
