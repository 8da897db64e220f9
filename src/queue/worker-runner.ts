import { type Job, type Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { settlesWithin } from '../abort.js';
import { JOB_LOCK_MS, WORKER_CONCURRENCY } from '../defaults.js';
import { jobFailure, throttlePauseMs } from './job-errors.js';
import { QUEUE_NAMES, type QueueKey } from './jobs.js';
import type { JobProcessor, WorkerDeps } from './worker-deps.js';

/** Options of {@link startWorkers}. */
export interface StartWorkersInput {
  deps: WorkerDeps;
  /** A connection with `maxRetriesPerRequest: null` (see `createRedisConnection`). */
  connection: Redis;
  /** Processors by job name. */
  processors: Record<string, JobProcessor>;
  /** Jobs run at once per queue in this process. Default 4. */
  concurrency?: number | undefined;
  /** How often stalled jobs (of a killed worker) are looked for. Default 30000 ms. */
  stalledIntervalMs?: number | undefined;
  /** How long a job's lock lasts without renewal. Default 30000 ms. */
  lockDurationMs?: number | undefined;
  /** Pause after a 429 that carried no `Retry-After`. Default 5000 ms. */
  throttleFallbackMs?: number | undefined;
  /**
   * Takes the workers' `error` events (their own connections are duplicates of `connection`):
   * a `RedisLink`'s `report`. Default: logged as a warning.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** Running workers of one process. */
export interface RunningWorkers {
  workers: Worker[];
  /** Waits until every worker is connected and fetching. */
  ready(): Promise<void>;
  /**
   * Stops taking jobs, lets the running ones finish, then disconnects. Resolves `false`, the
   * close still under way, when that takes longer than `withinMs`.
   */
  close(withinMs?: number): Promise<boolean>;
  /** Drops the workers' connections at once, for a close that cannot finish (Redis gone). */
  disconnect(): Promise<void>;
}

/**
 * Starts one BullMQ worker per queue, dispatching each job to its processor by name. A 429 from
 * the service pauses the whole queue (every worker process) for its `Retry-After` and puts the
 * job back without spending an attempt.
 */
export function startWorkers(input: StartWorkersInput): RunningWorkers {
  const { deps } = input;
  const queueOf: Record<QueueKey, Queue> = { sync: deps.queues.sync, backfill: deps.queues.backfill };
  const make = (key: QueueKey): Worker =>
    new Worker(
      QUEUE_NAMES[key],
      async (job: Job) => {
        const processor = input.processors[job.name];
        if (!processor) throw new UnrecoverableError(`no processor for job '${job.name}'`);
        const logger = deps.logger.child({ job: job.name, job_id: job.id, attempt: job.attemptsMade + 1 });
        try {
          // A database that mirrors another service is never filled from this one.
          await deps.checkService?.();
          // One owner per job: two jobs of one process must not share a stream's lease.
          return await processor(job, { ...deps, logger, owner: `${deps.owner}:${job.id ?? job.name}` });
        } catch (error) {
          const pauseMs = throttlePauseMs(error, input.throttleFallbackMs ?? 5000);
          if (pauseMs !== null) {
            logger.warn({ pause_ms: pauseMs }, 'service throttled, pausing the queue');
            await deps.budget.pause(pauseMs);
            await queueOf[key].rateLimit(pauseMs);
            throw Worker.RateLimitError();
          }
          // The one place a job's error is classed: not retryable becomes UnrecoverableError.
          const failure = jobFailure(error);
          logger[failure instanceof UnrecoverableError ? 'error' : 'warn']({ err: failure }, 'job failed');
          throw failure;
        }
      },
      {
        connection: input.connection,
        prefix: deps.queues.prefix,
        concurrency: input.concurrency ?? WORKER_CONCURRENCY,
        stalledInterval: input.stalledIntervalMs ?? JOB_LOCK_MS,
        lockDuration: input.lockDurationMs ?? JOB_LOCK_MS,
        maxStalledCount: 3,
        // Needed for the manual rate limit after a 429; the request rate itself is held by the
        // shared request budget, not by counting jobs.
        limiter: { max: 10_000, duration: 1000 },
      },
    );
  const workers = [make('sync'), make('backfill')];
  for (const worker of workers) {
    worker.on(
      'error',
      input.onError ??
        ((error) => deps.logger.warn({ err: error, queue: worker.name }, 'worker connection error')),
    );
  }
  let closing: Promise<unknown> | undefined;
  return {
    workers,
    async ready() {
      await Promise.all(workers.map((w) => w.waitUntilReady()));
    },
    async close(withinMs) {
      closing ??= Promise.all(workers.map((w) => w.close()));
      if (withinMs === undefined) {
        await closing;
        return true;
      }
      return settlesWithin(closing, withinMs);
    },
    async disconnect() {
      await Promise.all(workers.map((w) => w.disconnect()));
    },
  };
}
