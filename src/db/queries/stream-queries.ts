/**
 * Read-only queries for `status` and reports: plain functions over the database, no state.
 */

import { sql } from 'drizzle-orm';
import type { WalkCheckpoint } from '../../domain/checkpoints.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { type Executor, queryOne, queryRows, toDate } from '../rows.js';

/** A stream's stored state, lease and health. */
export interface StreamStatus {
  key: string;
  spec: StreamSpec;
  /** Every record of the stream up to this `rawId` is stored; null before the first complete walk. */
  watermark: number | null;
  /** The walk in progress (backfill or tail), null when none is. */
  walk: WalkCheckpoint | null;
  leaseOwner: string | null;
  leaseFence: number;
  leaseExpiresAt: Date | null;
  lastSuccessAt: Date | null;
  lastErrorAt: Date | null;
  lastError: string | null;
  errorStreak: number;
  /** The newest rawId seen at the service for the stream (page 1 of a walk, or a probe); null before any. */
  headRawId: number | null;
  /** When {@link headRawId} was last seen. */
  headSeenAt: Date | null;
  /** When the stream's latest backfill ended; null before one did (or before the column existed). */
  backfilledAt: Date | null;
}

/** Every stream, ordered by key. */
export async function listStreams(executor: Executor): Promise<StreamStatus[]> {
  const rows = await queryRows<Record<string, unknown>>(
    executor,
    sql`
    SELECT key, spec::text AS spec, watermark::text AS watermark, walk::text AS walk, lease_owner,
           lease_fence::text AS lease_fence, lease_expires_at, last_success_at, last_error_at, last_error, error_streak,
           head_raw_id::text AS head_raw_id, head_seen_at, backfilled_at
    FROM sync_streams ORDER BY key
    `,
  );
  return rows.map((r) => ({
    key: String(r['key']),
    spec: JSON.parse(String(r['spec'])) as StreamSpec,
    watermark: r['watermark'] === null ? null : Number(r['watermark']),
    walk: r['walk'] === null ? null : (JSON.parse(String(r['walk'])) as WalkCheckpoint),
    leaseOwner: (r['lease_owner'] as string | null) ?? null,
    leaseFence: Number(r['lease_fence']),
    leaseExpiresAt: toDate(r['lease_expires_at']),
    lastSuccessAt: toDate(r['last_success_at']),
    lastErrorAt: toDate(r['last_error_at']),
    lastError: (r['last_error'] as string | null) ?? null,
    errorStreak: Number(r['error_streak']),
    headRawId: r['head_raw_id'] === null ? null : Number(r['head_raw_id']),
    headSeenAt: toDate(r['head_seen_at']),
    backfilledAt: toDate(r['backfilled_at']),
  }));
}

/** Records not final: how many are not `packaged`, and how many re-reads are queued and due. */
export interface NonFinalCounts {
  /** Records whose `status` is not `packaged`. */
  notPackaged: number;
  /** Records queued for a re-read (not packaged, or a recent burn awaiting its target-chain hash). */
  queued: number;
  /** Of those, the ones due at `now`. */
  due: number;
}

export async function countNonFinal(executor: Executor, now: Date = new Date()): Promise<NonFinalCounts> {
  const row = await queryOne<{ not_packaged: number; queued: number; due: number }>(
    executor,
    sql`
    SELECT (SELECT count(*)::int FROM ledger_transactions WHERE status <> 'packaged') AS not_packaged,
           (SELECT count(*)::int FROM ledger_tx_rechecks) AS queued,
           (SELECT count(*)::int FROM ledger_tx_rechecks WHERE due_at <= ${now.toISOString()}::timestamptz) AS due
    `,
  );
  return { notPackaged: Number(row.not_packaged), queued: Number(row.queued), due: Number(row.due) };
}

/** Rejected records: distinct ones, and how many times they were seen in all. */
export async function countRejected(executor: Executor): Promise<{ distinct: number; sightings: number }> {
  const row = await queryOne<{ distinct: number; sightings: string }>(
    executor,
    sql`SELECT count(*)::int AS distinct, coalesce(sum(seen_count), 0)::text AS sightings FROM rejected_records`,
  );
  return { distinct: Number(row.distinct), sightings: Number(row.sightings) };
}

/** One run of a stream, as `sync_runs` holds it. */
export interface SyncRun {
  streamKey: string;
  fence: number;
  owner: string;
  startedAt: Date;
  finishedAt: Date | null;
  pages: number;
  inserted: number;
  updated: number;
  unchanged: number;
  rejected: number;
  outcome: string;
  error: string | null;
}

/** The latest runs, newest first, of one stream or of all. */
export async function recentRuns(
  executor: Executor,
  options: { streamKey?: string; limit?: number } = {},
): Promise<SyncRun[]> {
  const rows = await queryRows<Record<string, unknown>>(
    executor,
    sql`
    SELECT stream_key, fence::text AS fence, owner, started_at, finished_at, pages, inserted, updated,
           unchanged, rejected, outcome, error
    FROM sync_runs
    WHERE ${options.streamKey ?? null}::text IS NULL OR stream_key = ${options.streamKey ?? null}::text
    ORDER BY started_at DESC, id DESC
    LIMIT ${options.limit ?? 20}::int
    `,
  );
  return rows.map((r) => ({
    streamKey: String(r['stream_key']),
    fence: Number(r['fence']),
    owner: String(r['owner']),
    startedAt: toDate(r['started_at']) ?? new Date(0),
    finishedAt: toDate(r['finished_at']),
    pages: Number(r['pages']),
    inserted: Number(r['inserted']),
    updated: Number(r['updated']),
    unchanged: Number(r['unchanged']),
    rejected: Number(r['rejected']),
    outcome: String(r['outcome']),
    error: (r['error'] as string | null) ?? null,
  }));
}

/** The highest `rawId` stored, or null when nothing is. */
export async function maxStoredRawId(executor: Executor): Promise<number | null> {
  const row = await queryOne<{ max: string | null }>(
    executor,
    sql`SELECT max(raw_id)::text AS max FROM ledger_transactions`,
  );
  return row.max === null ? null : Number(row.max);
}
