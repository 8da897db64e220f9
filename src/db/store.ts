import { sql } from 'drizzle-orm';
import { DatabaseError, LeaseLostError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { LedgerTx } from '../sync/model.js';
import type {
  PageCommit,
  PendingRecord,
  StreamLease,
  StreamSpec,
  StreamState,
  SyncStore,
  WalkCheckpoint,
  WriteCounts,
} from '../sync/ports.js';
import type { Database } from './connect.js';
import { nameOperations } from './database-errors.js';
import { DEFAULT_RECHECK_POLICY, type RecheckPolicy, rescheduleRechecks } from './rechecks.js';
import { type Executor, queryRows, toDate } from './rows.js';
import { normaliseSpec, streamKey } from './stream-key.js';
import { toRejectedRows, writeRejected } from './write-rejected.js';
import { prepareBatch, writeTransactions } from './write-transactions.js';

/** Options of {@link createPgStore}. */
export interface PgStoreOptions {
  database: Database;
  /** The clock for leases, `first_seen_at`/`updated_at` and re-read scheduling. Default `new Date()`. */
  now?: () => Date;
  /** Re-read schedule of records not final; each field defaults as in {@link DEFAULT_RECHECK_POLICY}. */
  recheck?: Partial<RecheckPolicy>;
  /**
   * Wait for each commit to reach the disk (PostgreSQL `synchronous_commit`). Default false: a
   * crash may then lose the last fraction of a second of commits, rows and checkpoint together,
   * so the next run fetches those pages again; nothing half-written survives and no record is
   * skipped. The price of true is a disk flush per page.
   */
  synchronousCommit?: boolean;
  logger?: Logger;
}

/** SQLSTATEs after which a whole transaction is safely repeated: serialization failure, deadlock, and a unique violation from a concurrent writer of the same record (the repeat sees its row). */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01', '23505']);
const TRANSACTION_ATTEMPTS = 3;

/**
 * Settings of a re-read transaction: commit without waiting for the disk flush (see
 * `synchronousCommit`), and custom plans for the prepared upsert (as `openDatabase` also sets
 * for its connections).
 */
const SESSION_SETTINGS = (synchronousCommit: 'on' | 'off') =>
  sql`set_config('synchronous_commit', ${synchronousCommit}, true) AS commit_mode,
      set_config('plan_cache_mode', 'force_custom_plan', true) AS plan_mode`;

/**
 * The sync engine's store on PostgreSQL or PGlite.
 *
 * Leases: `acquireStream` takes a free or expired lease with a new, larger fencing number; the
 * same owner re-acquiring its live lease renews it and keeps the number. Owners must therefore be
 * unique per runner. Every committed page extends the lease by the length asked for at
 * acquisition; a commit or release carrying a fence smaller than the stream's is refused with
 * {@link LeaseLostError} and changes nothing.
 */
export function createPgStore(options: PgStoreOptions): SyncStore {
  const { database } = options;
  const now = options.now ?? (() => new Date());
  const policy: RecheckPolicy = { ...DEFAULT_RECHECK_POLICY, ...options.recheck };
  const logger = options.logger;
  const synchronousCommit: 'on' | 'off' = options.synchronousCommit === true ? 'on' : 'off';

  async function withRetries<T>(label: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (error) {
        const code = error instanceof DatabaseError ? error.sqlstate : undefined;
        if (code === undefined || !RETRYABLE_SQLSTATES.has(code) || attempt >= TRANSACTION_ATTEMPTS)
          throw error;
        logger?.warn({ err: error, sqlstate: code, attempt, operation: label }, 'database write retried');
      }
    }
  }

  const inTransaction = <T>(label: string, fn: (tx: Executor) => Promise<T>): Promise<T> =>
    withRetries(label, () => database.db.transaction((tx) => fn(tx)));

  const store: SyncStore = {
    async acquireStream(spec: StreamSpec, owner: string, leaseMs: number) {
      const key = streamKey(spec);
      const at = now();
      const nowIso = at.toISOString();
      const expires = new Date(at.getTime() + leaseMs).toISOString();
      const rows = await queryRows<{
        fence: string;
        watermark: string | null;
        walk: string | null;
        spec: string;
      }>(
        database.db,
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
          RETURNING s.key, s.lease_fence, s.watermark, s.walk, s.spec
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
        SELECT lease_fence::text AS fence, watermark::text AS watermark, walk::text AS walk, spec::text AS spec FROM s
        `,
      );
      const row = rows[0];
      if (row === undefined) {
        const [holder] = await queryRows<{ owner: string | null; expires: unknown }>(
          database.db,
          sql`SELECT lease_owner AS owner, lease_expires_at AS expires FROM sync_streams WHERE key = ${key}`,
        );
        throw new LeaseLostError(
          key,
          `held by ${holder?.owner ?? 'another runner'} until ${toDate(holder?.expires)?.toISOString() ?? 'unknown'}`,
        );
      }
      const lease: StreamLease = { key, fence: Number(row.fence), owner };
      const state: StreamState = {
        key,
        spec: JSON.parse(row.spec) as StreamSpec,
        watermark: row.watermark === null ? null : Number(row.watermark),
        walk: row.walk === null ? null : (JSON.parse(row.walk) as WalkCheckpoint),
      };
      return { lease, state };
    },

    async commitPage(commit: PageCommit): Promise<WriteCounts> {
      const at = now();
      const { lease } = commit;
      // Every sighting, repeats included, with its page: a repeat that disagrees is a conflict.
      const pages = commit.pages ?? [{ page: commit.page, records: commit.records }];
      const prepared = prepareBatch(
        pages.flatMap((p) => p.records),
        {
          now: at,
          burnWindowMs: policy.burnWindowMs,
          pages: pages.flatMap((p) => p.records.map(() => p.page)),
        },
      );
      const early = [...commit.rejected, ...prepared.rejected];
      // One statement is the whole commit (fence, checkpoint, rows, conflicts, history, rejected
      // records, run counts): atomic on its own, and one round trip per page.
      const written = await withRetries('page-write', () =>
        writeTransactions(database.db, {
          records: prepared.records,
          divergent: prepared.divergent,
          now: at,
          queueRechecks: policy,
          prepared: true,
          page: {
            streamKey: lease.key,
            fence: lease.fence,
            owner: lease.owner,
            page: commit.page,
            walk: commit.walk,
            watermark: commit.watermark,
            rejected: toRejectedRows(early),
            synchronousCommit,
          },
        }),
      );
      if (!written.fenced) throw await leaseLost(database.db, lease);
      if (written.conflicts > 0) {
        logger?.warn(
          { stream: lease.key, page: commit.page, conflicts: written.conflicts },
          'records served with immutable fields different from the stored ones: stored kept, conflicts recorded',
        );
      }
      return {
        inserted: written.inserted,
        updated: written.updated,
        unchanged: written.unchanged,
        rejected: early.length + written.clashes.length,
        conflicts: written.conflicts,
      };
    },

    async advanceWatermark(lease: StreamLease, watermark: number): Promise<void> {
      const rows = await queryRows<{ key: string }>(
        database.db,
        sql`UPDATE sync_streams SET
              watermark = greatest(watermark, ${watermark}::bigint),
              updated_at = ${now().toISOString()}::timestamptz
            WHERE key = ${lease.key} AND lease_fence <= ${lease.fence}::bigint
            RETURNING key`,
      );
      if (rows.length === 0) throw await leaseLost(database.db, lease);
    },

    async releaseStream(lease: StreamLease, outcome: { ok: true } | { ok: false; error: string }) {
      const nowIso = now().toISOString();
      const ok = outcome.ok;
      const error = outcome.ok ? null : outcome.error.slice(0, 4000);
      // A stale lease releases nothing and records nothing on the stream; its run row still ends.
      await database.db.execute(sql`
        WITH s AS (
          UPDATE sync_streams SET
            lease_owner = NULL,
            lease_expires_at = NULL,
            last_success_at = CASE WHEN ${ok}::boolean THEN ${nowIso}::timestamptz ELSE last_success_at END,
            error_streak = CASE WHEN ${ok}::boolean THEN 0 ELSE error_streak + 1 END,
            last_error = CASE WHEN ${ok}::boolean THEN last_error ELSE ${error}::text END,
            last_error_at = CASE WHEN ${ok}::boolean THEN last_error_at ELSE ${nowIso}::timestamptz END,
            updated_at = ${nowIso}::timestamptz
          WHERE key = ${lease.key} AND lease_fence = ${lease.fence}::bigint AND lease_owner = ${lease.owner}
          RETURNING key
        )
        UPDATE sync_runs SET
          finished_at = ${nowIso}::timestamptz,
          outcome = CASE WHEN ${ok}::boolean THEN 'ok' ELSE 'error' END,
          error = ${error}::text
        WHERE stream_key = ${lease.key} AND fence = ${lease.fence}::bigint AND outcome = 'running'
      `);
    },

    async duePending(limit: number, at: Date): Promise<PendingRecord[]> {
      const rows = await queryRows<{ raw_id: string; ledger_hash: string; attempts: number }>(
        database.db,
        sql`
        SELECT r.raw_id::text AS raw_id, t.ledger_hash, r.attempts
        FROM ledger_tx_rechecks r JOIN ledger_transactions t ON t.raw_id = r.raw_id
        WHERE r.due_at <= ${at.toISOString()}::timestamptz
        ORDER BY r.due_at, r.raw_id
        LIMIT ${limit}::int
        `,
      );
      return rows.map((r) => ({
        rawId: Number(r.raw_id),
        ledgerHash: r.ledger_hash,
        attempts: Number(r.attempts),
      }));
    },

    async commitReread(input: {
      records: LedgerTx[];
      missing: PendingRecord[];
      now: Date;
    }): Promise<WriteCounts> {
      const prepared = prepareBatch(input.records, { now: input.now, burnWindowMs: policy.burnWindowMs });
      return inTransaction('reread-write', async (tx) => {
        await tx.execute(sql`SELECT ${SESSION_SETTINGS(synchronousCommit)}`);
        const written = await writeTransactions(tx, {
          records: prepared.records,
          now: input.now,
          queueRechecks: null,
          prepared: true,
        });
        const rejected = [...prepared.rejected, ...written.clashes];
        await writeRejected(tx, { rejected, streamKey: null, page: null, now: input.now });
        // A record refused, or served with other immutable fields, keeps its re-read schedule.
        const conflicted = new Set([...written.clashes.map((c) => c.rawId), ...written.conflicted]);
        const reread = [
          ...prepared.records
            .filter((r) => !conflicted.has(r.row.raw_id))
            .map((r) => ({ rawId: r.row.raw_id, pending: r.pending })),
          // What could not be stored or found is retried later like a record not final, until given up.
          ...[...input.missing, ...rejected].flatMap((r) =>
            r.rawId === undefined ? [] : [{ rawId: r.rawId, pending: 'missing' as const }],
          ),
          ...written.conflicted.map((rawId) => ({ rawId, pending: 'missing' as const })),
        ];
        await rescheduleRechecks(tx, { reread, now: input.now, policy });
        return {
          inserted: written.inserted,
          updated: written.updated,
          unchanged: written.unchanged,
          rejected: rejected.length,
          conflicts: written.conflicts,
        };
      });
    },
  };
  // The names its failures report (`DatabaseError.operation`, the `operation` of logs).
  return nameOperations(store, {
    acquireStream: 'lease-acquire',
    commitPage: 'page-write',
    releaseStream: 'lease-release',
    advanceWatermark: 'watermark-write',
    duePending: 'reread-select',
    commitReread: 'reread-write',
  });
}

async function leaseLost(tx: Executor, lease: StreamLease): Promise<LeaseLostError> {
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
