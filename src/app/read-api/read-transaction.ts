/**
 * Every read of the read API is read-only and cut short by a statement timeout: an answer of
 * several statements in its own READ ONLY transaction, REPEATABLE READ so that they (the stream's
 * watermark, a list's length and its page) see one snapshot (a read-only transaction never fails
 * to serialize); an answer whose statements need no common snapshot (a look-up, a list by key) sends
 * them alone, on sessions that are read-only and time out already.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/connect.js';
import type { Executor } from '../../db/rows.js';

/** The longest one read of the read API may take in the database before it is cancelled. */
export const READ_STATEMENT_TIMEOUT_MS = 3000;

/** Runs `read` in a READ ONLY, REPEATABLE READ transaction whose statements time out after {@link READ_STATEMENT_TIMEOUT_MS}. */
export function readOnly<T>(database: Database, read: (db: Executor) => Promise<T>): Promise<T> {
  return database.db.transaction(
    async (tx) => {
      await tx.execute(sql.raw(`SET LOCAL statement_timeout = ${READ_STATEMENT_TIMEOUT_MS}`));
      return read(tx);
    },
    { accessMode: 'read only', isolationLevel: 'repeatable read' },
  );
}

/**
 * Runs `read`, its statements each alone, where every session of `database` is read-only with a
 * statement timeout (the read API's pool on PostgreSQL), else as {@link readOnly} does: for
 * answers whose statements need no common snapshot. A look-up is one statement; a list by key
 * reads its stream's watermark, then its page at or below it (records at or below a watermark
 * stay, so a later snapshot serves the same page, fresher). One round trip a statement, where a
 * transaction of its own adds three.
 */
export function readAlone<T>(database: Database, read: (db: Executor) => Promise<T>): Promise<T> {
  return database.readOnlySessions ? read(database.db) : readOnly(database, read);
}
