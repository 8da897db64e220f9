import { hostname } from 'node:os';
import { createProofStore } from '../db/proof-store.js';
import { LEASE_MS, leaseOwnerName } from '../defaults.js';
import type { LedgerQueues } from '../queue/queues.js';
import type { SharedRequestBudget } from '../queue/request-budget.js';
import type { WorkerDeps } from '../queue/worker-deps.js';
import type { AppContext } from './context.js';
import { createFetchByHash, createFetchPage } from './sync-adapters.js';

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
 * the client's fetches routed through the request budget that all workers share in Redis.
 */
export function createWorkerDeps(input: {
  app: AppContext;
  queues: LedgerQueues;
  budget: SharedRequestBudget;
  signal: AbortSignal;
  tuning?: WorkerTuning | undefined;
}): WorkerDeps {
  const { app, budget, signal } = input;
  const tuning = input.tuning ?? {};
  const fetchPage = createFetchPage(app.client);
  const fetchByHash = createFetchByHash(app.client);
  return {
    syncStore: app.store,
    backfillStore: createProofStore({ database: app.database }),
    fetchPage: async (spec, page) => {
      await budget.take();
      return fetchPage(spec, page);
    },
    fetchByHash: async (hash) => {
      await budget.take();
      return fetchByHash(hash);
    },
    refreshReference: async () => {
      await budget.take();
      const info = await app.client.info();
      await app.saveTokens(info.tokenList);
      await budget.take();
      const fees = await app.client.fees();
      app.logger.info({ tokens: info.tokenList.length, fees: fees.length }, 'tokens and fees refreshed');
      return { tokens: info.tokenList.length, fees: fees.length };
    },
    queues: input.queues,
    budget,
    logger: app.logger,
    owner: leaseOwnerName('worker', hostname(), process.pid),
    pagesPerRange: tuning.pagesPerRange ?? 20,
    parallelBackfill: tuning.parallelBackfill ?? true,
    leaseMs: tuning.leaseMs ?? LEASE_MS.worker,
    signal,
  };
}
