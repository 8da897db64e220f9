import type { Redis } from 'ioredis';
import { LEASE_MS, PAGES_PER_RANGE, REFERENCE_REFRESH_MS } from '../../defaults.js';
import { leaseOwnerName } from '../../domain/lease-owner.js';
import type { LedgerQueues } from '../../queue/queues.js';
import { redisRangeStarts } from '../../queue/range-starts.js';
import type { SharedRequestBudget } from '../../queue/shared-request-budget.js';
import type { WorkerDeps } from '../../queue/worker-deps.js';
import type { AppContext } from '../context.js';
import { createServiceGuard } from '../mirrored-service.js';
import {
  createFetchByHash,
  createFetchKeyHead,
  createFetchKeyPage,
  createFetchKeyText,
  createFetchPage,
} from '../sync-adapters.js';

/** Tunables of a worker process; each has a default. */
export interface WorkerTuning {
  /** Pages per backfill range job. Default 20. */
  pagesPerRange?: number | undefined;
  /** Backfill the global list with parallel range jobs. Default true. */
  parallelBackfill?: boolean | undefined;
  /** Stream lease length. Default 60000 ms. */
  leaseMs?: number | undefined;
}

/**
 * Builds the dependencies of every job from the process context: the store, the proof store, and
 * the client's fetches. The client takes every request from `budget` (shared by all workers in
 * Redis) itself, so the fetches need no budget of their own.
 */
export function createWorkerDeps(input: {
  app: AppContext;
  queues: LedgerQueues;
  /** The budget `app.client` takes its requests from; a job's 429 pauses it. */
  budget: SharedRequestBudget;
  signal: AbortSignal;
  /** Abandons the requests in flight, their retries and budget waits (a shutdown that cannot wait). */
  requestSignal?: AbortSignal | undefined;
  tuning?: WorkerTuning | undefined;
  /** The workers' Redis: where the range jobs share where they began. */
  redis?: Redis | undefined;
}): WorkerDeps {
  const { app, budget, signal, requestSignal, redis } = input;
  const tuning = input.tuning ?? {};
  return {
    syncStore: app.store,
    indexes: app.indexes,
    requestsPerSecond: app.config.requestsPerSecond,
    backfillStore: app.backfills,
    fetchPage: createFetchPage(app.client, requestSignal),
    fetchKeyPage: createFetchKeyPage(app.client, requestSignal),
    fetchKeyText: createFetchKeyText(app.client, requestSignal),
    fetchKeyHead: createFetchKeyHead(app.client, requestSignal),
    listDialect: () => app.dialects.resolve(requestSignal),
    forgetDialect: (error) => app.dialects.forgetOn(error),
    recordDialect: (streamKey, dialect) => app.dialects.recordRun(streamKey, dialect),
    keyCount: () => app.client.keyCount(),
    fetchByHash: createFetchByHash(app.client, requestSignal),
    refreshReference: async () => {
      const info = await app.client.info({ signal: requestSignal });
      await app.saveTokens(info.tokenList);
      const fees = await app.client.fees({ signal: requestSignal });
      app.logger.info({ tokens: info.tokenList.length, fees: fees.length }, 'tokens and fees refreshed');
      return { tokens: info.tokenList.length, fees: fees.length };
    },
    queues: input.queues,
    budget,
    logger: app.logger,
    concurrency: app.config.concurrency,
    inFlight: (records) => app.client.inFlight(records),
    settleMs: app.config.settleMs,
    owner: leaseOwnerName('worker'),
    rangeStarts: redis === undefined ? undefined : (id) => redisRangeStarts(redis, input.queues.prefix, id),
    pagesPerRange: tuning.pagesPerRange ?? PAGES_PER_RANGE,
    parallelBackfill: tuning.parallelBackfill ?? true,
    leaseMs: tuning.leaseMs ?? LEASE_MS.worker,
    signal,
    checkService: createServiceGuard(app.service, { trustMs: REFERENCE_REFRESH_MS, signal: requestSignal }),
  };
}
