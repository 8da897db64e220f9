/**
 * Commands that mostly read (`verify`) on a mirror that may refuse writes: a hot standby, a
 * database with `default_transaction_read_only`, or a role granted SELECT alone. They migrate
 * only a schema that is behind, and their own bookkeeping writes are skipped with a warning.
 */
import type { Database } from '../db/connect.js';
import { toDatabaseError } from '../db/database-errors.js';
import { migrateDatabase, readMigrationState } from '../db/schema/migrate-database.js';
import { DatabaseError, LedgerIndexerError } from '../errors.js';

/** SQLSTATE 42501: the role lacks the privilege (a role granted SELECT alone). */
const PERMISSION_DENIED = '42501';

/**
 * The database refusing a write, as a {@link DatabaseError}: read-only (25006) or no privilege
 * (42501); null for any other failure.
 */
export function writeRefusal(error: unknown): DatabaseError | null {
  const translated = toDatabaseError(error);
  return translated instanceof DatabaseError &&
    (translated.kind === 'read-only' || translated.sqlstate === PERMISSION_DENIED)
    ? translated
    : null;
}

/**
 * Applies the pending migrations, and only when some are pending: a mirror whose schema is
 * current is never written to. A mirror behind that refuses the migration fails with one line.
 */
export async function migrateIfBehind(database: Database, which = 'this mirror'): Promise<void> {
  const { applied, expected } = await readMigrationState(database);
  if (applied >= expected) return;
  try {
    await migrateDatabase(database);
  } catch (error) {
    const refusal = writeRefusal(error);
    if (refusal === null) throw error;
    throw new LedgerIndexerError(
      `${which}'s schema is behind (${applied} of ${expected} migrations applied) and the database refuses writes (${refusal.message}); run 'ledger-indexer migrate' where it can write`,
      { cause: error },
    );
  }
}

/**
 * Runs a write that only keeps a record of the work (not the work itself): on a database that
 * refuses writes it is skipped, and `warn` is told why in one line. Other failures are thrown.
 */
export async function writeUnlessReadOnly(
  what: string,
  write: () => Promise<unknown>,
  warn: (line: string) => void,
): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    const refusal = writeRefusal(error);
    if (refusal === null) throw error;
    warn(`${what} skipped: ${refusal.message}`);
    return false;
  }
}
