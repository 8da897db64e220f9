import { accountProblem } from '../config.js';
import { REREAD_LIMIT } from '../defaults.js';
import type { StreamSpec } from '../domain/stream-key.js';
import { UsageError } from '../errors.js';
import type { KeyRangeTask } from '../sync/key-source.js';

/** The queues: stream syncs and maintenance on one, the parallel backfill's pieces on the other. */
export const QUEUE_NAMES = { sync: 'ledger-sync', backfill: 'ledger-backfill' } as const;
export type QueueKey = keyof typeof QUEUE_NAMES;

/** Sync one stream: its tail, or the next stretch of its backfill. */
export interface SyncStreamJob {
  stream: StreamSpec;
}

/** Fetch one stretch of a stream's list and store it with the ranges it proves. */
export type BackfillRangeJob = PageRangeJob | KeyRangeJob;

/** One range of rawIds of a parallel backfill by key, walked from just below it. */
export interface KeyRangeJob extends KeyRangeTask {
  stream: StreamSpec;
  backfillId: string;
}

/**
 * One stretch of pages of a parallel backfill by page number, fetched in ascending page order.
 * Starts at `fromPage`; stops after `toPage`, or once a page reaches below `stopBelowRawId` (a
 * repair walk across a gap), or at the end of the list.
 */
export interface PageRangeJob {
  stream: StreamSpec;
  backfillId: string;
  fromPage: number;
  toPage: number | null;
  stopBelowRawId: number | null;
  /** A repair walk seeks forward to the last page still holding this rawId or a newer one. */
  seekRawId?: number | null | undefined;
  /** Set by an earlier attempt: the lowest rawId of page `fromPage - 1`. */
  previousLow?: number | null | undefined;
}

/** Judge a parallel backfill once its ranges are done: repair the gaps, or finish the stream. */
export interface BackfillCheckJob {
  stream: StreamSpec;
  backfillId: string;
  round: number;
}

/** Re-read stored records that are not final yet. */
export interface RereadJob {
  limit: number;
  /** The global list is followed: records near its head are re-read through list pages. Default false. */
  lists?: boolean;
  /**
   * Only records due for at least this long, ms: the stream jobs of the global list re-read what
   * is due at each of their runs, and this job sweeps up what they left (a run that failed, or
   * more due records than one run takes). Default 0: every record due.
   */
  overdueMs?: number;
}

/** Refresh tokens (`/info`) and fees (`/fees`). */
export type RefreshReferenceJob = Record<string, never>;

/** Every job: its queue and its payload type. */
export interface JobPayloads {
  'sync-stream': SyncStreamJob;
  'backfill-range': BackfillRangeJob;
  'backfill-check': BackfillCheckJob;
  reconcile: RereadJob;
  'refresh-reference': RefreshReferenceJob;
}
export type JobName = keyof JobPayloads;

export const JOB_QUEUE: Record<JobName, QueueKey> = {
  'sync-stream': 'sync',
  'backfill-range': 'backfill',
  'backfill-check': 'backfill',
  reconcile: 'sync',
  'refresh-reference': 'sync',
};

/**
 * Validates a job's payload as it comes out of Redis. A payload of the wrong shape can never
 * succeed, so the error is a {@link UsageError} (not retryable).
 */
export function parseJobPayload<N extends JobName>(name: N, data: unknown): JobPayloads[N] {
  const object = asObject(data, name);
  switch (name) {
    case 'sync-stream':
      return { stream: parseStream(object.stream, name) } as JobPayloads[N];
    case 'backfill-range':
      if (object.upTo !== undefined)
        return {
          stream: parseStream(object.stream, name),
          backfillId: str(object.backfillId, `${name}.backfillId`),
          after: object.after === null ? null : int(object.after, `${name}.after`, 0),
          upTo: int(object.upTo, `${name}.upTo`, 0),
        } as JobPayloads[N];
      return {
        stream: parseStream(object.stream, name),
        backfillId: str(object.backfillId, `${name}.backfillId`),
        fromPage: int(object.fromPage, `${name}.fromPage`, 1),
        toPage: object.toPage === null ? null : int(object.toPage, `${name}.toPage`, 1),
        stopBelowRawId:
          object.stopBelowRawId === null ? null : int(object.stopBelowRawId, `${name}.stopBelowRawId`, 0),
        seekRawId:
          object.seekRawId === null || object.seekRawId === undefined
            ? null
            : int(object.seekRawId, `${name}.seekRawId`, 0),
        previousLow:
          object.previousLow === null || object.previousLow === undefined
            ? null
            : int(object.previousLow, `${name}.previousLow`, 0),
      } as JobPayloads[N];
    case 'backfill-check':
      return {
        stream: parseStream(object.stream, name),
        backfillId: str(object.backfillId, `${name}.backfillId`),
        round: int(object.round, `${name}.round`, 0),
      } as JobPayloads[N];
    case 'reconcile':
      return {
        limit: object.limit === undefined ? REREAD_LIMIT : int(object.limit, `${name}.limit`, 1),
        lists: object.lists === true,
        overdueMs: object.overdueMs === undefined ? 0 : int(object.overdueMs, `${name}.overdueMs`, 0),
      } as JobPayloads[N];
    case 'refresh-reference':
      return {} as JobPayloads[N];
    default:
      throw new UsageError(`unknown job '${String(name)}'`);
  }
}

function parseStream(value: unknown, job: string): StreamSpec {
  const object = asObject(value, `${job}.stream`);
  const spec: StreamSpec = {};
  for (const key of ['account', 'tokenTag', 'action', 'withoutAction'] as const) {
    const field = object[key];
    if (field === undefined || field === null) continue;
    spec[key] = str(field, `${job}.stream.${key}`);
  }
  const problem = spec.account === undefined ? null : accountProblem(spec.account);
  if (problem !== null) throw new UsageError(`job payload ${job}.stream.account ${problem}`);
  return spec;
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`job payload ${what} must be an object`);
  }
  return value as Record<string, unknown>;
}

function str(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '')
    throw new UsageError(`job payload ${what} must be a non-empty string`);
  return value;
}

function int(value: unknown, what: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`job payload ${what} must be a whole number >= ${min}`);
  }
  return value;
}
