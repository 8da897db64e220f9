import { sql } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import type { Logger } from '../../logger.js';

import type { DeferredIndexes } from '../../sync/ports/read-indexes.js';
import type { Database } from '../connect.js';
import { databaseOperation, toDatabaseError } from '../database-errors.js';
import { type Executor, queryRows } from '../rows.js';

/**
 * The read-side indexes whose keys come in no order (accounts): none is read by a page write.
 * Dropped before the first backfill into an empty mirror and built once at its end: a btree built
 * from sorted rows costs less than one kept up row by row at random places, which also costs the
 * backfill memory and time as the history grows. The read-side indexes whose new keys fall in a
 * few places (times, which grow with the backfill; token tags, actions and bundle tags, a few
 * values each) stay: keeping them up costs about what building them would, and a build stands
 * alone at the end of the run (docs/performance.md). So do the primary keys, the unique ledger
 * hash (the clash check) and the partial indexes the re-read claim walks.
 */
export const DEFERRABLE_INDEXES = [
  'ledger_transactions_from_idx',
  'ledger_transactions_to_idx',
  'ledger_bundle_items_from_idx',
  'ledger_bundle_items_to_idx',
  'ledger_transactions_from_lower_idx',
  'ledger_transactions_to_lower_idx',
  'ledger_transactions_fee_recipient_lower_idx',
  'ledger_bundle_items_from_lower_idx',
  'ledger_bundle_items_to_lower_idx',
] as const;

/** SQLSTATEs of a lock not granted at once, and of a deadlock: the tables were busy. */
const TABLES_BUSY = new Set(['55P03', '40P01']);

/**
 * How often, and how far apart, a deferral asks for the tables before it gives up: another
 * process's start (the token refresh's statements, a status read) holds them for milliseconds.
 */
const DEFER_TRIES = { tries: 10, delayMs: 100 };

/** Key of the advisory lock that keeps two processes from deferring at once. */
const DEFER_LOCK_KEY = 7_311_905_021;

/**
 * Key of the advisory lock a restore at the end of a backfill holds while it builds: another
 * such restore (the workers' check job and tail walk end the backfill together) leaves the
 * builds to it rather than build beside it on the same cores and analyze the tables twice.
 */
export const RESTORE_LOCK_KEY = 7_311_905_022;

/**
 * Deferral of the read-side indexes over PostgreSQL or PGlite. The definitions of the dropped
 * indexes are kept in `deferred_indexes` (read from `pg_indexes`, so what is built again is what
 * the migrations made); a row goes with its index's build, in one transaction, so a crash at any
 * point leaves either the index or its row, and the next restore finishes the job.
 */
export function createDeferredIndexes(input: {
  database: Database;
  logger?: Logger | undefined;
  /** Connections building indexes at once (PostgreSQL only). Default 2. */
  builders?: number | undefined;
}): DeferredIndexes {
  const { database, logger } = input;
  return {
    // Only a saving: a failure leaves the indexes as they are, for the backfill to go on with.
    defer: () =>
      databaseOperation('index-defer', () => deferIndexes(database, logger)).catch((error: unknown) => {
        logger?.warn({ err: error }, 'read-side indexes kept up: the deferral failed');
        return [];
      }),
    restore: async (options) => {
      const whenIdle = options?.whenIdle === true;
      const build = databaseOperation('index-restore', () =>
        restoreIndexes(database, whenIdle, input.builders ?? 2, logger),
      );
      if (!whenIdle) return build;
      // At the end of a backfill, its records are stored: a failed build stays deferred for the
      // next run, `verify` or `migrate` rather than fail the run.
      return build.catch((error: unknown) => {
        logger?.warn({ err: error }, 'deferred indexes not built yet: the build failed');
        return [];
      });
    },
    pending: () => databaseOperation('index-pending', () => pendingIndexes(database)),
  };
}

/** Drops the deferrable indexes when the mirror holds no record and none are deferred yet. */
async function deferIndexes(database: Database, logger: Logger | undefined): Promise<string[]> {
  // One cheap look first: every scheduled walk asks, and only a first one goes further.
  if (!(await deferrable(database.db))) return [];
  let dropped: string[] | null = null;
  for (let attempt = 1; dropped === null; attempt++) {
    try {
      dropped = await dropDeferrable(database);
    } catch (error) {
      const failure = toDatabaseError(error);
      if (!(failure instanceof DatabaseError) || !TABLES_BUSY.has(failure.sqlstate ?? '')) throw failure;
      if (attempt >= DEFER_TRIES.tries) {
        logger?.warn('tables busy: read-side indexes kept up during the backfill');
        return [];
      }
      await new Promise((resolve) => setTimeout(resolve, DEFER_TRIES.delayMs));
    }
  }
  if (dropped.length > 0)
    logger?.info({ indexes: dropped.length }, 'read-side indexes deferred to the end of the first backfill');
  return dropped;
}

/** The drops, in one transaction with the look that allows them. */
function dropDeferrable(database: Database): Promise<string[]> {
  return database.db.transaction(async (tx) => {
    // One process at a time.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${DEFER_LOCK_KEY})`);
    // Writers wait here rather than store a record between the look and the drops. The tables
    // must be free now: a deferral never queues (nor queues writers) behind anyone, it asks again
    // a little later. The drops' own lock is taken here, at once: a weaker one, raised by the
    // drops, deadlocked with a statement that read a table and then wrote it (the token
    // refresh's retag), and the backfill kept every index up.
    await tx.execute(sql`SET LOCAL lock_timeout = '1s'`);
    await tx.execute(
      sql`LOCK TABLE ledger_transactions, ledger_bundle_items IN ACCESS EXCLUSIVE MODE NOWAIT`,
    );
    if (!(await deferrable(tx))) return [];
    const present = await queryRows<{ name: string; definition: string }>(
      tx,
      sql`SELECT indexname AS name, indexdef AS definition FROM pg_indexes
          WHERE schemaname = current_schema() AND indexname IN (${sql.join(
            DEFERRABLE_INDEXES.map((name) => sql`${name}`),
            sql`, `,
          )})`,
    );
    for (const { name, definition } of present) {
      await tx.execute(
        sql`INSERT INTO deferred_indexes (name, definition, deferred_at) VALUES (${name}, ${definition}, now())`,
      );
      // The name comes from the fixed list above, matched in pg_indexes: never from input.
      await tx.execute(sql.raw(`DROP INDEX ${quoteIdent(name)}`));
    }
    return present.map((p) => p.name);
  });
}

/**
 * Builds every deferred index, up to `builders` at once, each in its own transaction with the
 * removal of its row. `whenIdle`: not while a backfill is still going (a stream walking its
 * backfill, or a parallel backfill running), which builds them itself when it ends.
 */
async function restoreIndexes(
  database: Database,
  whenIdle: boolean,
  builders: number,
  logger: Logger | undefined,
): Promise<string[]> {
  const pending = await pendingIndexes(database);
  if (pending.length === 0) return [];
  if (whenIdle && (await backfillGoing(database))) return [];
  const build = () => buildPending(database, pending, builders, logger);
  // PGlite has one connection (and one process): nobody builds beside it.
  if (!whenIdle || database.kind === 'pglite') return build();
  // Held for the whole build, on a connection of its own; the builds run on others.
  return database.withConnection((db) =>
    db.transaction(async (tx) => {
      const [lock] = await queryRows<{ held: boolean }>(
        tx,
        sql`SELECT pg_try_advisory_xact_lock(${RESTORE_LOCK_KEY}) AS held`,
      );
      return lock?.held === true ? build() : [];
    }),
  );
}

/**
 * Builds the `pending` indexes, `builders` at a time, then analyzes the tables. An index another
 * restorer built meanwhile is skipped (`buildOne` finds its row gone).
 */
async function buildPending(
  database: Database,
  pending: readonly string[],
  builders: number,
  logger: Logger | undefined,
): Promise<string[]> {
  const started = Date.now();
  const built: string[] = [];
  let next = 0;
  const build = async (): Promise<void> => {
    while (next < pending.length) {
      const name = pending[next++]!;
      if (await buildOne(database, name)) built.push(name);
    }
  };
  const lanes = database.kind === 'pglite' ? 1 : Math.max(1, builders);
  await Promise.all(Array.from({ length: Math.min(lanes, pending.length) }, build));
  if (built.length === 0) return built;
  // The tables were empty when last looked at: until statistics are gathered (autovacuum may be
  // off, or a while away), the planner takes a busy account for a few records and reads its
  // whole history for one page of the read API. Two seconds a million records.
  await database.db.execute(sql`ANALYZE ledger_transactions, ledger_bundle_items`);
  logger?.info(
    { indexes: built.length, ms: Date.now() - started },
    'deferred indexes built, tables analyzed',
  );
  return built;
}

/**
 * Builds one deferred index on a connection of its own. The row's lock keeps a second restorer
 * waiting until this build commits; it then finds the row gone and does nothing.
 */
async function buildOne(database: Database, name: string): Promise<boolean> {
  return database.withConnection((db) =>
    db.transaction(async (tx) => {
      const [row] = await queryRows<{ definition: string }>(
        tx,
        sql`DELETE FROM deferred_indexes WHERE name = ${name} RETURNING definition`,
      );
      if (!row) return false;
      // The definition is PostgreSQL's own (pg_indexes), stored by `deferIndexes`.
      await tx.execute(
        sql.raw(row.definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS ')),
      );
      return true;
    }),
  );
}

/** Whether the mirror holds no record and nothing is deferred yet. */
async function deferrable(executor: Executor): Promise<boolean> {
  const [row] = await queryRows<{ yes: boolean }>(
    executor,
    sql`SELECT NOT EXISTS (SELECT 1 FROM ledger_transactions)
           AND NOT EXISTS (SELECT 1 FROM deferred_indexes) AS yes`,
  );
  return row?.yes === true;
}

/** The names of the indexes deferred now (what `status` and the gauge report too). */
export async function deferredIndexNames(executor: Executor): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(
    executor,
    sql`SELECT name FROM deferred_indexes ORDER BY name`,
  );
  return rows.map((r) => r.name);
}

function pendingIndexes(database: Database): Promise<string[]> {
  return deferredIndexNames(database.db);
}

/** Whether a backfill is under way: a stream's walk in backfill mode, or a parallel backfill running. */
async function backfillGoing(database: Database): Promise<boolean> {
  const [row] = await queryRows<{ going: boolean }>(
    database.db,
    sql`SELECT EXISTS (SELECT 1 FROM sync_streams WHERE walk->>'mode' = 'backfill')
            OR EXISTS (SELECT 1 FROM backfill_runs WHERE status = 'running') AS going`,
  );
  return row?.going === true;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
