/**
 * A runner's liveness on PostgreSQL: a session-level advisory lock keyed by its lease owner name,
 * held on a connection of its own for the runner's life. The server frees it when that session
 * ends (the process exited, was killed or lost its connection), so another process that can take
 * the lock knows the owner is gone, whatever became of its pid and on whichever host it ran.
 */
import { sql } from 'drizzle-orm';
import { DatabaseError } from '../../errors.js';
import type { Database } from '../connect.js';
import { queryRows } from '../rows.js';

/**
 * First key of the two-key advisory locks of lease owners (the second is the hash of the owner
 * name). Two-key locks never collide with the single-key locks of migrations and index builds.
 */
const RUNNER_LOCK_CLASS = 7_311_905;

/** SQLSTATE of a lock wait that reached `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

/** The liveness lock of a runner, from {@link holdRunnerLock}. */
export interface RunnerLock {
  /** Whether the lock is held (false on PGlite, or in the unlikely case of a hash shared with a live runner). */
  held: boolean;
  /** Lets go of the lock and its connection. Never throws. */
  release(): Promise<void>;
}

/**
 * Takes the liveness lock of `owner` on a dedicated connection and keeps it until `release()`.
 * Take it before the first lease of `owner`: from then on, {@link isRunnerGone} answers false
 * for it. On PGlite (one process, one connection) there is nothing to hold.
 */
export async function holdRunnerLock(database: Database, owner: string): Promise<RunnerLock> {
  if (database.kind !== 'postgres') return { held: false, release: async () => {} };
  let letGo = (): void => {};
  const released = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  let taken = (_held: boolean): void => {};
  const lockTaken = new Promise<boolean>((resolve) => {
    taken = resolve;
  });
  const session = database.withConnection(async (db) => {
    const [row] = await queryRows<{ held: boolean }>(
      db,
      sql`SELECT pg_try_advisory_lock(${RUNNER_LOCK_CLASS}, hashtext(${owner})) AS held`,
    );
    taken(row?.held === true);
    await released;
    // The session goes back to the pool: it must not keep the lock.
    if (row?.held === true)
      await db.execute(sql`SELECT pg_advisory_unlock(${RUNNER_LOCK_CLASS}, hashtext(${owner}))`);
  });
  const held = await Promise.race([lockTaken, session.then(() => false)]);
  return {
    held,
    async release() {
      letGo();
      // A connection that broke meanwhile lost the lock with it: nothing left to release.
      await session.catch(() => undefined);
    },
  };
}

/**
 * Whether the runner `owner` is gone: its liveness lock is free, or becomes free within `waitMs`
 * (a process being killed keeps its connection open for a moment). PostgreSQL only: a runner
 * that never held the lock (another kind of runner) also looks gone, so ask only about owners
 * that hold it for their whole life.
 */
export async function isRunnerGone(database: Database, owner: string, waitMs: number): Promise<boolean> {
  try {
    // A transaction-level lock taken and let go at once: only a live holder's session blocks it.
    await database.db.transaction(async (tx) => {
      await tx.execute(
        sql`SELECT set_config('lock_timeout', ${`${Math.max(1, Math.round(waitMs))}ms`}, true)`,
      );
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${RUNNER_LOCK_CLASS}, hashtext(${owner}))`);
    });
    return true;
  } catch (error) {
    if (error instanceof DatabaseError && error.sqlstate === LOCK_NOT_AVAILABLE) return false;
    throw error;
  }
}
