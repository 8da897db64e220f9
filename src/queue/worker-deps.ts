import type { Logger } from '../logger.js';
import type { BackfillStore, RangeStarts } from '../sync/ports/backfill-store.js';
import type {
  FetchByHash,
  FetchKeyHead,
  FetchKeyPage,
  FetchKeyText,
  FetchPage,
} from '../sync/ports/fetches.js';
import type { DeferredIndexes } from '../sync/ports/read-indexes.js';
import type { SyncStore } from '../sync/ports/sync-store.js';
import type { LedgerQueues } from './queues.js';
import type { SharedRequestBudget } from './shared-request-budget.js';

/** Everything a job processor may use; built once per worker process and handed to every job. */
export interface WorkerDeps {
  syncStore: SyncStore;
  backfillStore: BackfillStore;
  /** Defers the read-side indexes of a first backfill; without it they are kept up throughout. */
  indexes?: DeferredIndexes | undefined;
  /**
   * The request budget of all workers together (0: none): a first backfill it bounds keeps its
   * indexes up (`indexesPayToDefer`). Default none.
   */
  requestsPerSecond?: number | undefined;
  /** Pages of the service; every request, retries included, takes from the budget shared by all workers. */
  fetchPage: FetchPage;
  /** The stream's records after a cursor, by key (the deployed dialect). */
  fetchKeyPage: FetchKeyPage;
  /** The same answers kept as text, for a range job whose store parses them on its thread. Optional. */
  fetchKeyText?: FetchKeyText | undefined;
  /** The stream's newest rawId, by key: what a parallel backfill by key splits below. */
  fetchKeyHead: FetchKeyHead;
  /** How the service's lists are read: `LEDGER_PAGING`, or what the service answered when asked once. */
  listDialect: () => Promise<'key' | 'page'>;
  /** After a list answer of the wrong shape: the kept dialect is asked again by the next job. */
  forgetDialect?: ((error: unknown) => Promise<void>) | undefined;
  /** After a stream's walk: records on its latest run the dialect it read in (shown by `status`). */
  recordDialect?: ((streamKey: string, dialect: 'key' | 'page') => Promise<void>) | undefined;
  /** Records asked per key request (the count the service accepts). */
  keyCount: () => number;
  fetchByHash: FetchByHash;
  /** Refreshes tokens (`/info`) and fees (`/fees`) in the database. */
  refreshReference: () => Promise<{ tokens: number; fees: number }>;
  queues: LedgerQueues;
  budget: SharedRequestBudget;
  logger: Logger;
  /** The most requests one job has in flight at once (`LEDGER_CONCURRENCY`): pages of a walk, re-reads. */
  concurrency: number;
  /** Requests to keep in flight now, at most `concurrency`: the budget × the measured answer time. Default `concurrency`. */
  inFlight?: ((records?: number) => number) | undefined;
  /** The settling window of late arrivals, ms (`LEDGER_SETTLE_MS`). Default 3000. */
  settleMs?: number | undefined;
  /** This process, as shown in stream leases: `host:pid:random`. */
  owner: string;
  /** Where the range jobs of run `backfillId` by page number began (in Redis). Absent: unshared. */
  rangeStarts?: ((backfillId: string) => RangeStarts) | undefined;
  /** Pages per backfill range job. Default 20. */
  pagesPerRange: number;
  /** Backfill the global list with parallel range jobs (else one stream walk). Default true. */
  parallelBackfill: boolean;
  /** Lease length of a stream walk. */
  leaseMs: number;
  /** Aborted when the worker shuts down: long jobs stop at the next page boundary. */
  signal: AbortSignal;
  /**
   * Run before every job: rejects (`ServiceMismatchError`, not retryable) when the database
   * mirrors another service than the configured one. Default: no check.
   */
  checkService?: (() => Promise<void>) | undefined;
}

/** A job processor: a thin shell that parses the payload and calls `src/`. */
export type JobProcessor = (
  job: {
    id?: string | undefined;
    name: string;
    data: unknown;
    attemptsMade: number;
    /** When the job was added, ms (BullMQ's `job.timestamp`). */
    timestamp?: number | undefined;
    /** Its delay after `timestamp`, ms: a scheduler's job is added one period ahead. */
    opts?: { delay?: number | undefined } | undefined;
    /** Replaces the job's payload in Redis: a retried job resumes from what it saved. */
    updateData(data: unknown): Promise<void>;
  },
  deps: WorkerDeps,
) => Promise<unknown>;

/**
 * When a job was meant to start: a scheduled job's planned time (the scheduler adds each run ahead
 * of time, delayed to it), so a scheduler's runs are exactly one period apart whatever the
 * latency of picking them up; never later than now.
 */
export function plannedStart(job: Parameters<JobProcessor>[0], now = Date.now()): Date {
  const planned = job.timestamp === undefined ? now : job.timestamp + (job.opts?.delay ?? 0);
  return new Date(Math.min(now, planned));
}
