/**
 * Every read of the read API in its own READ ONLY transaction, cut short by a statement timeout.
 * REPEATABLE READ: the statements of one answer (the stream's watermark, a list's length and its
 * page) see one snapshot; a read-only transaction never fails to serialize.
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
