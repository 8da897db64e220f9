/** Stream leases on PostgreSQL/PGlite: taking, renewing and releasing them, and the watermark. */

import { sql } from 'drizzle-orm';
import type { WalkCheckpoint } from '../../domain/checkpoints.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { normaliseSpec, streamKey } from '../../domain/stream-key.js';
import { CommitLostError, LeaseLostError } from '../../errors.js';
import type {
  ProofScope,
  ReleaseOutcome,
  SettleState,
  StreamLease,
  StreamState,
  SyncStore,
} from '../../sync/ports/sync-store.js';
import type { Database } from '../connect.js';
import { type Executor, queryRows, toDate } from '../rows.js';
import { parseLaterHeads, settleAssignments } from '../write/settle-columns.js';

/** The lease part of the sync store (see `createPgStore`). */
export type LeaseStore = Pick<SyncStore, 'acquireStream' | 'advanceWatermark' | 'releaseStream'>;

/**
 * Leases: `acquireStream` takes a free or expired lease with a new, larger fencing number; the
 * same owner re-acquiring its live lease renews it and keeps the number. A release or watermark
 * move carrying a fence smaller than the stream's is refused with {@link LeaseLostError}.
 */
export function createLeaseStore(input: { database: Database; now: () => Date }): LeaseStore {
  const { database, now } = input;
  return {
    acquireStream: (spec, owner, leaseMs) => acquireStream(database.db, { spec, owner, leaseMs, at: now() }),

    async advanceWatermark(lease, watermark, options = {}): Promise<void> {
      const { proven } = options;
      // A repair proved the whole list from rawId 0 itself: its head is the watermark, and the
      // walk it read around is over.
      const repair = proven?.floor !== null && proven?.floor !== undefined && proven.floor < 0;
      const rows = await queryRows<{ key: string }>(
        database.db,
        sql`UPDATE sync_streams SET
              watermark = ${repair ? sql`${watermark}::bigint` : sql`greatest(watermark, ${watermark}::bigint)`},${settleAssignments(options.settle)}
              ${repair ? sql`walk = NULL,` : sql``}
              backfilled_at = CASE WHEN watermark IS NULL OR ${repair}::boolean THEN ${now().toISOString()}::timestamptz
                                   ELSE backfilled_at END,
              updated_at = ${now().toISOString()}::timestamptz
            WHERE key = ${lease.key} AND lease_fence <= ${lease.fence}::bigint
              AND ${proven === undefined ? sql`true` : provenUpTo(lease.key, watermark, proven)}
            RETURNING key`,
      );
      if (rows.length > 0) return;
      if (proven !== undefined && (await stillFenced(database.db, lease)))
        throw new CommitLostError(
          lease.key,
          `its proven ranges no longer reach rawId ${watermark}`,
          'watermark-write',
        );
      throw await leaseLost(database.db, lease);
    },

    async releaseStream(lease: StreamLease, outcome: ReleaseOutcome) {
      const nowIso = now().toISOString();
      const ok = outcome.ok;
      const error = outcome.ok ? null : outcome.error.slice(0, 4000);
      // A stop asked for by a signal is neither a success nor a failure of the stream.
      const stopped = !outcome.ok && outcome.stopped === true;
      // A stale lease releases nothing and records nothing on the stream; its run row still ends.
      await database.db.execute(sql`
        WITH s AS (
          UPDATE sync_streams SET
            lease_owner = NULL,
            lease_expires_at = NULL,
            last_success_at = CASE WHEN ${ok}::boolean THEN ${nowIso}::timestamptz ELSE last_success_at END,
            error_streak = CASE WHEN ${ok}::boolean THEN 0 WHEN ${stopped}::boolean THEN error_streak
                                ELSE error_streak + 1 END,
            last_error = CASE WHEN ${ok}::boolean OR ${stopped}::boolean THEN last_error ELSE ${error}::text END,
            last_error_at = CASE WHEN ${ok}::boolean OR ${stopped}::boolean THEN last_error_at
                                 ELSE ${nowIso}::timestamptz END,
            updated_at = ${nowIso}::timestamptz
          WHERE key = ${lease.key} AND lease_fence = ${lease.fence}::bigint AND lease_owner = ${lease.owner}
          RETURNING key
        )
        UPDATE sync_runs SET
          finished_at = ${nowIso}::timestamptz,
          outcome = CASE WHEN ${ok}::boolean THEN 'ok' WHEN ${stopped}::boolean THEN 'stopped' ELSE 'error' END,
          error = ${error}::text
        WHERE stream_key = ${lease.key} AND fence = ${lease.fence}::bigint AND outcome = 'running'
      `);
    },
  };
}

/** Takes or renews the lease (see {@link createLeaseStore}); opens a run for a new fence. */
async function acquireStream(
  db: Executor,
  input: { spec: StreamSpec; owner: string; leaseMs: number; at: Date },
): Promise<{ lease: StreamLease; state: StreamState }> {
  const { spec, owner, leaseMs, at } = input;
  const key = streamKey(spec);
  const nowIso = at.toISOString();
  const expires = new Date(at.getTime() + leaseMs).toISOString();
  const rows = await queryRows<
    { fence: string; watermark: string | null; walk: string | null; spec: string } & SettleRow
  >(
    db,
    sql`
        WITH s AS (
          INSERT INTO sync_streams AS s (key, spec, lease_owner, lease_fence, lease_expires_at, lease_ms, created_at, updated_at)
          VALUES (${key}, ${JSON.stringify(normaliseSpec(spec))}::jsonb, ${owner}, 1, ${expires}::timestamptz,
                  ${leaseMs}::int, ${nowIso}::timestamptz, ${nowIso}::timestamptz)
          ON CONFLICT (key) DO UPDATE SET
            lease_fence = CASE WHEN s.lease_owner = excluded.lease_owner AND s.lease_expires_at > ${nowIso}::timestamptz
                               THEN s.lease_fence ELSE s.lease_fence + 1 END,
            lease_owner = excluded.lease_owner,
            lease_expires_at = excluded.lease_expires_at,
            lease_ms = excluded.lease_ms,
            updated_at = excluded.updated_at
          WHERE s.lease_owner IS NULL
             OR s.lease_expires_at IS NULL
             OR s.lease_expires_at <= ${nowIso}::timestamptz
             OR s.lease_owner = excluded.lease_owner
          RETURNING s.key, s.lease_fence, s.watermark, s.walk, s.spec, s.settled_raw_id, s.settle_pending_raw_id,
                    s.settle_pending_at, s.settle_pending_later
        ),
        abandoned AS (
          UPDATE sync_runs r SET outcome = 'error', error = 'lease expired before the run ended',
                 finished_at = ${nowIso}::timestamptz
          FROM s WHERE r.stream_key = s.key AND r.outcome = 'running' AND r.fence < s.lease_fence
        ),
        run AS (
          INSERT INTO sync_runs (stream_key, fence, owner, started_at, outcome)
          SELECT s.key, s.lease_fence, ${owner}, ${nowIso}::timestamptz, 'running' FROM s
          ON CONFLICT (stream_key, fence) DO NOTHING
        )
        SELECT lease_fence::text AS fence, watermark::text AS watermark, walk::text AS walk, spec::text AS spec,
               settled_raw_id::text AS settled, settle_pending_raw_id::text AS pending,
               (extract(epoch FROM settle_pending_at) * 1000)::float8 AS pending_at,
               settle_pending_later::text AS later
        FROM s
        `,
  );
  const row = rows[0];
  if (row === undefined) {
    const [holder] = await queryRows<{ owner: string | null; expires: unknown }>(
      db,
      sql`SELECT lease_owner AS owner, lease_expires_at AS expires FROM sync_streams WHERE key = ${key}`,
    );
    throw new LeaseLostError(
      key,
      `held by ${holder?.owner ?? 'another runner'} until ${toDate(holder?.expires)?.toISOString() ?? 'unknown'}`,
    );
  }
  const lease: StreamLease = { key, fence: Number(row.fence), owner };
  const { walk } = row;
  const state: StreamState = {
    key,
    spec: JSON.parse(row.spec) as StreamSpec,
    watermark: row.watermark === null ? null : Number(row.watermark),
    walk: walk === null ? null : (JSON.parse(walk) as WalkCheckpoint),
    settle: settleState(row),
  };
  return { lease, state };
}

/** The settling columns of a `sync_streams` row, as text. */
interface SettleRow {
  settled: string | null;
  pending: string | null;
  pending_at: number | string | null;
  later: string | null;
}

/** The stream's settling state from its columns. */
function settleState(row: SettleRow): SettleState {
  const pending =
    row.pending === null || row.pending_at === null
      ? null
      : { rawId: Number(row.pending), at: Number(row.pending_at) };
  const later = pending === null ? [] : parseLaterHeads(row.later);
  return {
    settled: row.settled === null ? null : Number(row.settled),
    pending,
    ...(later.length > 0 ? { later } : {}),
  };
}

/** The error for a write refused for its stale fence, naming the stream's fence and owner now. */
export async function leaseLost(tx: Executor, lease: StreamLease): Promise<LeaseLostError> {
  const [row] = await queryRows<{ fence: string; owner: string | null }>(
    tx,
    sql`SELECT lease_fence::text AS fence, lease_owner AS owner FROM sync_streams WHERE key = ${lease.key}`,
  );
  if (row === undefined) return new LeaseLostError(lease.key, 'the stream does not exist');
  return new LeaseLostError(
    lease.key,
    `fence ${lease.fence} is stale: the stream is at fence ${row.fence} (owner ${row.owner ?? 'none'})`,
  );
}

/**
 * Whether the proofs `scope` names (`backfill_proven_ranges`) cover every rawId from 0 to `upTo`,
 * as SQL inside the stream row's update: each range, in order, starts at most one past the
 * farthest reach of those before.
 */
function provenUpTo(key: string, upTo: number, scope: ProofScope) {
  // A catch-up's floor counts as proven while the stream's mark still stands at it: this statement
  // updates the stream's row, so `settled_raw_id` and `watermark` here are the row's before it.
  const floor =
    scope.floor === null || scope.floor < 0
      ? sql``
      : sql`UNION ALL SELECT 0, ${scope.floor}::bigint
              WHERE coalesce(sync_streams.settled_raw_id, sync_streams.watermark) >= ${scope.floor}::bigint`;
  const run = scope.floor === null ? sql`` : sql`AND backfill_id = ${scope.backfillId}`;
  return sql`(
    WITH r AS (
      SELECT lo, hi, max(hi) OVER (ORDER BY lo, hi ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
      FROM (
        SELECT lo, hi FROM backfill_proven_ranges
        WHERE stream_key = ${key} AND lo <= ${upTo}::bigint ${run}
        ${floor}
      ) p
    )
    SELECT NOT EXISTS (SELECT 1 FROM r WHERE lo > coalesce(reach, -1) + 1)
       AND coalesce((SELECT max(hi) FROM r), -1) >= ${upTo}::bigint
  )`;
}

/** Whether the lease still holds the stream (nobody took it since). */
async function stillFenced(db: Executor, lease: StreamLease): Promise<boolean> {
  const rows = await queryRows<{ fence: string }>(
    db,
    sql`SELECT lease_fence::text AS fence FROM sync_streams WHERE key = ${lease.key}`,
  );
  return rows[0] !== undefined && Number(rows[0].fence) <= lease.fence;
}
