import { anySignal, settlesWithin, untilAborted, whenAborted } from '../../abort.js';
import type { RequestBudget } from '../../client/request-budget.js';
import type { Config } from '../../config.js';
import { loadSchedules } from '../../db/stores/wanted-schedules.js';
import { WORKER_CONCURRENCY } from '../../defaults.js';
import type { HttpSurface } from '../../http/server.js';
import type { Logger } from '../../logger.js';
import { createMetrics, type Metrics } from '../../metrics/index.js';
import { openRedis, type RedisLink } from '../../queue/connection.js';
import { queueStatus } from '../../queue/queue-status.js';
import { createLedgerQueues, DEFAULT_PREFIX, type LedgerQueues } from '../../queue/queues.js';
import { redisFailureLine } from '../../queue/redis-failures.js';
import { keepSchedulesRegistered } from '../../queue/schedules.js';
import { createSharedRequestBudget } from '../../queue/shared-request-budget.js';
import { type RunningWorkers, startWorkers } from '../../queue/worker-runner.js';
import { type AppContext, createContext } from '../context.js';
import { openHttpSurface } from '../http-routes.js';
import { PROCESSORS } from './jobs/index.js';
import { createWorkerDeps, type WorkerTuning } from './worker-context.js';

/** Options of {@link runWorker}. */
export interface RunWorkerOptions {
  config: Config & { redisUrl: string };
  logger: Logger;
  /** Aborting it drains the worker: running jobs stop at their next page, no new one starts. */
  signal: AbortSignal;
  /** Jobs at once per queue. Default 4. */
  concurrency?: number | undefined;
  /** BullMQ key prefix. Default `ledger-indexer`. */
  prefix?: string | undefined;
  /** Job lock length; a killed worker's jobs run again within about this long. Default 30000 ms. */
  lockMs?: number | undefined;
  tuning?: WorkerTuning | undefined;
  /** Called once the workers take jobs. */
  onReady?: (() => void) | undefined;
  /**
   * On shutdown, how long running jobs get to stop at a page boundary before their requests are
   * abandoned. Default 3000 ms.
   */
  drainMs?: number | undefined;
}

/** How long each step of a shutdown that cannot drain waits before the next, harder one. */
const CLOSE_GRACE_MS = 2500;

/** How long a scrape or `/status` waits for the queue counts. */
const QUEUE_READ_MS = 2000;

/**
 * The worker process: migrates the database, waits for Redis (retrying for as long as it takes),
 * then runs the BullMQ workers until `signal` is aborted, then drains and closes everything it
 * opened. The schedules `schedule` kept in PostgreSQL are registered in Redis at start and after
 * every reconnect. Rejects with `RedisAuthError` as soon as Redis refuses the credentials.
 */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config, logger } = options;
  const redis = openRedis(config.redisUrl, 'worker', { logger });
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  // Every request of the client (retries, hedges and re-reads included) takes from the budget
  // all workers share in Redis, and a 429 pauses them all.
  const budget = createSharedRequestBudget({
    redis: redis.connection,
    prefix,
    perSecond: config.requestsPerSecond,
  });
  // The HTTP surface (LEDGER_HTTP_PORT, off by default) and the metrics it serves.
  const metrics = (config.httpPort ?? 0) > 0 ? createMetrics() : undefined;
  const app = await createContext({ config, logger, budget, metrics }).catch((error: unknown) => {
    redis.stopReconnecting();
    redis.connection.disconnect();
    throw error;
  });
  // What ends the worker: the operator's signal, or Redis refusing the credentials.
  const stop = anySignal([options.signal, redis.refused]);
  const opened: { queues?: LedgerQueues } = {};
  let surface: HttpSurface | undefined;
  try {
    if (metrics)
      surface = await startSurface({ app, metrics, budget, port: config.httpPort ?? 0, opened, stop });
    const connected = await redis.ready(stop).then(
      () => true,
      (error: unknown) => {
        if (stop.aborted) return false;
        throw error;
      },
    );
    if (connected) await runJobs({ options, app, redis, budget, prefix, stop, opened });
  } finally {
    await surface?.close();
    redis.stopReconnecting();
    redis.connection.disconnect();
    await app.close();
    logger.info({}, 'worker stopped');
  }
  if (redis.refused.aborted) throw redis.refused.reason;
}

/** Takes jobs until `stop` aborts, then drains. */
async function runJobs(input: {
  options: RunWorkerOptions;
  app: AppContext;
  redis: RedisLink;
  budget: ReturnType<typeof createSharedRequestBudget>;
  prefix: string;
  stop: AbortSignal;
  /** Where the queues are put once open, for the HTTP surface. */
  opened: { queues?: LedgerQueues };
}): Promise<void> {
  const { options, app, redis, budget, stop } = input;
  const { connection } = redis;
  const queues = createLedgerQueues({ connection, prefix: input.prefix, onError: redis.report });
  input.opened.queues = queues;
  const jobSignal = new AbortController();
  const requestSignal = new AbortController();
  const deps = createWorkerDeps({
    app,
    queues,
    budget,
    signal: jobSignal.signal,
    requestSignal: requestSignal.signal,
    tuning: options.tuning,
    redis: connection,
  });
  const running = startWorkers({
    deps,
    connection,
    processors: PROCESSORS,
    concurrency: options.concurrency,
    lockDurationMs: options.lockMs,
    stalledIntervalMs: options.lockMs,
    onError: redis.report,
  });
  let schedules: ReturnType<typeof keepSchedulesRegistered> | undefined;
  try {
    await untilAborted(running.ready(), stop);
    schedules = keepSchedulesRegistered({
      connection,
      queues,
      load: () => loadSchedules(app.database.db, queues.prefix),
      logger: options.logger,
    });
    await untilAborted(schedules.started, stop);
    options.logger.info(
      { concurrency: options.concurrency ?? WORKER_CONCURRENCY, prefix: queues.prefix, owner: deps.owner },
      'worker ready',
    );
    options.onReady?.();
    await whenAborted(stop);
  } catch (error) {
    if (!stop.aborted) throw error;
  } finally {
    schedules?.stop();
    options.logger.info({}, 'worker draining');
    jobSignal.abort();
    await drain({
      running,
      queues,
      redis,
      requests: requestSignal,
      drainMs: options.drainMs,
      logger: options.logger,
    });
  }
}

/** The worker's HTTP surface: its database, and its queues once they are open. */
function startSurface(input: {
  app: AppContext;
  metrics: Metrics;
  /** The shared budget: the surface's head reads take from it like the jobs' requests. */
  budget: RequestBudget;
  port: number;
  opened: { queues?: LedgerQueues };
  stop: AbortSignal;
}): Promise<HttpSurface> {
  const { app, opened } = input;
  return openHttpSurface({
    config: app.config,
    database: app.database,
    logger: app.logger,
    metrics: input.metrics,
    port: input.port,
    signal: input.stop,
    shared: { budget: input.budget, observer: input.metrics.client },
    readQueues: async () => {
      if (opened.queues === undefined) return { error: 'the worker is not connected to Redis yet' };
      // While Redis reconnects its commands wait: a scrape does not wait with them.
      const counts = queueStatus(opened.queues);
      counts.catch(() => undefined);
      if (!(await settlesWithin(counts, QUEUE_READ_MS))) return { error: 'Redis did not answer in time' };
      try {
        return { queues: await counts };
      } catch (error) {
        return { error: redisFailureLine(error, app.config.redisUrl ?? '') };
      }
    },
  });
}

/**
 * Lets running jobs stop at their next page within `drainMs` while Redis is up. Otherwise (Redis
 * down: nothing can be acknowledged; or jobs stuck on a hanging service) abandons their requests
 * and closes without waiting for Redis. BullMQ runs an unfinished job again once its lock runs out.
 */
async function drain(input: {
  running: RunningWorkers;
  queues: LedgerQueues;
  redis: RedisLink;
  requests: AbortController;
  drainMs: number | undefined;
  logger: Logger;
}): Promise<void> {
  const { running, redis, logger } = input;
  const drainMs = input.drainMs ?? 3000;
  const redisUp = redis.connection.status === 'ready';
  if (redisUp && (await running.close(drainMs))) {
    await settlesWithin(input.queues.close(), CLOSE_GRACE_MS);
    return;
  }
  logger.warn(
    { drain_ms: drainMs },
    redisUp
      ? 'jobs did not stop in time, abandoning their requests'
      : 'redis unreachable, stopping without draining',
  );
  input.requests.abort(new Error('worker shutting down'));
  // BullMQ's close waits forever for a connection that is reconnecting: let each end first.
  redis.stopReconnecting();
  if (redis.connection.status !== 'ready') await redis.ended(CLOSE_GRACE_MS);
  if (!(await running.close(CLOSE_GRACE_MS))) {
    logger.warn({}, 'worker close did not finish, disconnecting from Redis');
    await settlesWithin(running.disconnect(), CLOSE_GRACE_MS);
  }
}
