import type { Config } from '../src/config.js';
import { createContext } from '../src/context.js';
import type { Logger } from '../src/logger.js';
import { createRedisConnection } from '../src/queue/connection.js';
import { createLedgerQueues, DEFAULT_PREFIX } from '../src/queue/queues.js';
import { createSharedRequestBudget } from '../src/queue/request-budget.js';
import { createWorkerDeps, type WorkerTuning } from '../src/queue/worker-context.js';
import { startWorkers } from '../src/queue/worker-runner.js';
import { PROCESSORS } from './processors.js';

/** Options of {@link runWorker}. */
export interface RunWorkerOptions {
  config: Config & { redisUrl: string };
  logger: Logger;
  /** Aborting it drains the worker: running jobs finish, no new one starts. */
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
}

/**
 * The worker process: migrates the database, then runs the BullMQ workers until `signal` is
 * aborted, then drains and closes everything it opened.
 */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config, logger } = options;
  const connection = createRedisConnection(config.redisUrl, 'worker');
  connection.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  // Every request of the client (retries, hedges and re-reads included) takes from the budget
  // all workers share in Redis, and a 429 pauses them all.
  const budget = createSharedRequestBudget({
    redis: connection,
    prefix,
    perSecond: config.requestsPerSecond,
  });
  const app = await createContext({ config, logger, budget }).catch((error: unknown) => {
    connection.disconnect();
    throw error;
  });
  const queues = createLedgerQueues({ connection, prefix });
  const jobSignal = new AbortController();
  const deps = createWorkerDeps({ app, queues, budget, signal: jobSignal.signal, tuning: options.tuning });
  const running = startWorkers({
    deps,
    connection,
    processors: PROCESSORS,
    concurrency: options.concurrency,
    lockDurationMs: options.lockMs,
    stalledIntervalMs: options.lockMs,
  });
  try {
    await running.ready();
    logger.info(
      { concurrency: options.concurrency ?? 4, prefix: queues.prefix, owner: deps.owner },
      'worker ready',
    );
    options.onReady?.();
    if (!options.signal.aborted) {
      await new Promise<void>((resolve) =>
        options.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
    logger.info({}, 'worker draining');
    jobSignal.abort();
  } finally {
    await running.close();
    await queues.close();
    connection.disconnect();
    await app.close();
    logger.info({}, 'worker stopped');
  }
}
