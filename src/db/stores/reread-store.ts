/** Re-reads on PostgreSQL/PGlite: the records due, and the commit of what a re-read found. */
import { type SQL, sql } from 'drizzle-orm';
import type { LedgerTx } from '../../domain/model.js';
import type { Logger } from '../../logger.js';
import type { ClaimedRecord, PendingRecord, SyncStore, WriteCounts } from '../../sync/ports/sync-store.js';
import type { Database } from '../connect.js';
import { type Executor, queryRows } from '../rows.js';
import { prepareBatch } from '../write/prepare-batch.js';
import { writeRejected } from '../write/rejected-rows.js';
import { type RereadPolicy, rescheduleRereads } from '../write/reread-queue.js';
import { buildRereadWrite } from '../write/reread-write-sql.js';
import { withRetries } from '../write/write-retries.js';
import { type TransactionWriteResult, writeTransactions } from '../write/write-transactions.js';

/**
 * Settings of a re-read transaction: commit without waiting for the disk flush (see
 * `synchronousCommit`), and custom plans for the prepared upsert (as `openDatabase` also sets
 * for its connections).
 */
const SESSION_SETTINGS = (synchronousCommit: 'on' | 'off') =>
  sql`set_config('synchronous_commit', ${synchronousCommit}, true) AS commit_mode,
      set_config('plan_cache_mode', 'force_custom_plan', true) AS plan_mode`;

/** Options of {@link createRereadStore}. */
export interface RereadStoreOptions {
  database: Database;
  policy: RereadPolicy;
  synchronousCommit: 'on' | 'off';
  checkSignatures: boolean;
  logger?: Logger | undefined;
}

/** The re-read part of the sync store (see `createPgStore`). */
/** What a re-read that found no record to store wrote. */
const NOTHING_WRITTEN: TransactionWriteResult = {
  fenced: true,
  inserted: 0,
  updated: 0,
  unchanged: 0,
  conflicts: 0,
  conflicted: [],
  clashes: [],
};

export function createRereadStore(
  options: RereadStoreOptions,
): Pick<SyncStore, 'duePending' | 'claimDue' | 'commitReread'> {
  const { database, policy, synchronousCommit, checkSignatures, logger } = options;
  const inTransaction = <T>(label: string, fn: (tx: Executor) => Promise<T>): Promise<T> =>
    withRetries(label, () => database.db.transaction((tx) => fn(tx)), logger);
  return {
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

    claimDue: (
      limit: number,
      at: Date,
      claim: { rankLimit?: number; dueBy?: Date | undefined; owner?: string | undefined } = {},
    ) =>
      claimDue(database, {
        limit,
        at,
        dueBy: claim.dueBy ?? at,
        rankLimit: claim.rankLimit ?? 0,
        claimMs: policy.claimMs,
        owner: claim.owner ?? null,
      }),

    async commitReread(input: {
      records: LedgerTx[];
      missing: PendingRecord[];
      now: Date;
      seen?: LedgerTx[] | undefined;
    }): Promise<WriteCounts> {
      const records = [...input.records, ...(await queuedOf(database, input.seen ?? []))];
      const prepared = prepareBatch(records, {
        now: input.now,
        burnWindowMs: policy.burnWindowMs,
        checkSignatures,
      });
      return inTransaction('reread-write', async (tx) => {
        await tx.execute(sql`SELECT ${SESSION_SETTINGS(synchronousCommit)}`);
        const written =
          prepared.records.length === 0
            ? NOTHING_WRITTEN
            : await writeTransactions(tx, {
                records: prepared.records,
                prepared: true,
                statement: buildRereadWrite({ records: prepared.records, now: input.now }),
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
        await rescheduleRereads(tx, { reread, now: input.now, policy });
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
}

/**
 * Claims due records (see `SyncStore.claimDue`): skips rows another runner is claiming, and pushes
 * the claimed ones' due time `claimMs` ahead in the same statement.
 */
/** What a claim asks for (see `SyncStore.claimDue`). */
export interface ClaimInput {
  limit: number;
  at: Date;
  dueBy: Date;
  rankLimit: number;
  claimMs: number;
  /** The claiming one-shot sync's lease owner (`claimed_by`); null for other runners. */
  owner: string | null;
}

async function claimDue(database: Database, input: ClaimInput): Promise<ClaimedRecord[]> {
  const { rankLimit } = input;
  const rows = await queryRows<{
    raw_id: string;
    ledger_hash: string;
    attempts: number;
    list_rank: string | null;
    burn_rank: string | null;
  }>(database.db, claimDueQuery(input));
  const rank = (value: string | null): number | null =>
    value === null || Number(value) >= rankLimit ? null : Number(value);
  return rows.map((r) => ({
    rawId: Number(r.raw_id),
    ledgerHash: r.ledger_hash,
    attempts: Number(r.attempts),
    listRank: rank(r.list_rank),
    burnRank: rank(r.burn_rank),
  }));
}

/**
 * The statement of {@link claimDue}, built without I/O. Every access to `ledger_transactions`
 * is by key, whatever the statistics say: each claimed record is looked up on its own (the
 * `LIMIT 1` keeps the planner from turning the look-ups into a join over the table), and rank
 * subqueries walk the primary key upwards from the record (`ORDER BY raw_id`) and stop at the
 * limit, so a straggler far down costs at most that many index entries. Before the table's first
 * ANALYZE (a first backfill, autovacuum not round yet) the planner otherwise chose scans of the
 * table: on a 100,000-record mirror after a backfill and a tail, over a second for 55 records.
 */
export function claimDueQuery(input: ClaimInput): SQL {
  const { limit, rankLimit, claimMs } = input;
  const nowIso = input.at.toISOString();
  const dueIso = input.dueBy.toISOString();
  return sql`
        WITH picked AS (
          SELECT raw_id FROM ledger_tx_rechecks
          WHERE due_at <= ${dueIso}::timestamptz
          ORDER BY due_at, raw_id
          LIMIT ${limit}::int
          FOR UPDATE SKIP LOCKED
        ),
        claimed AS (
          UPDATE ledger_tx_rechecks r
          SET due_at = ${nowIso}::timestamptz + ${claimMs}::float8 * interval '1 millisecond',
              claimed_by = ${input.owner}::text
          FROM picked p WHERE r.raw_id = p.raw_id
          RETURNING r.raw_id, r.attempts
        )
        SELECT c.raw_id::text AS raw_id, t.ledger_hash, c.attempts,
          CASE WHEN ${rankLimit}::int > 0 THEN (
            SELECT count(*) FROM (
              SELECT 1 FROM ledger_transactions n WHERE n.raw_id > c.raw_id
              ORDER BY n.raw_id LIMIT ${rankLimit}::int
            ) above) END::text AS list_rank,
          CASE WHEN ${rankLimit}::int > 0 AND t.action = 'burn' THEN (
            SELECT count(*) FROM (
              SELECT 1 FROM ledger_transactions n WHERE n.raw_id > c.raw_id AND n.action = 'burn'
              ORDER BY n.raw_id LIMIT ${rankLimit}::int
            ) above) END::text AS burn_rank
        FROM claimed c
        CROSS JOIN LATERAL (
          SELECT t.ledger_hash, t.action FROM ledger_transactions t WHERE t.raw_id = c.raw_id LIMIT 1
        ) t
        ORDER BY c.raw_id DESC
        `;
}

/** The records among `seen` that are on the re-read queue. */
async function queuedOf(database: Database, seen: readonly LedgerTx[]): Promise<LedgerTx[]> {
  if (seen.length === 0) return [];
  const ids = seen.map((tx) => tx.rawId).filter((id) => Number.isSafeInteger(id));
  const rows = await queryRows<{ raw_id: string }>(
    database.db,
    sql`SELECT raw_id::text AS raw_id FROM ledger_tx_rechecks WHERE raw_id = ANY(${`{${ids.join(',')}}`}::bigint[])`,
  );
  const queued = new Set(rows.map((r) => Number(r.raw_id)));
  return seen.filter((tx) => queued.has(tx.rawId));
}

/** The owners named by re-read claims not committed yet (`claimed_by`). */
export async function rereadClaimOwners(database: Database): Promise<string[]> {
  const rows = await queryRows<{ owner: string }>(
    database.db,
    sql`SELECT DISTINCT claimed_by AS owner FROM ledger_tx_rechecks WHERE claimed_by IS NOT NULL`,
  );
  return rows.map((r) => r.owner);
}

/**
 * Ends the re-read claims of `owner`, a sync found gone: its records are due again now (a due
 * time already past stays). Resolves to the number of records released.
 */
export async function releaseRereadClaims(database: Database, owner: string, now: Date): Promise<number> {
  const rows = await queryRows<{ raw_id: string }>(
    database.db,
    sql`UPDATE ledger_tx_rechecks
        SET due_at = least(due_at, ${now.toISOString()}::timestamptz), claimed_by = NULL
        WHERE claimed_by = ${owner}
        RETURNING raw_id::text AS raw_id`,
  );
  return rows.length;
}
