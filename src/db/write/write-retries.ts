/** Repeating a database write that failed for a reason a second attempt can clear. */
import { DatabaseError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { UNIQUE_VIOLATION } from '../sqlstate.js';

/** SQLSTATEs after which a whole transaction is safely repeated: serialization failure, deadlock, and a unique violation from a concurrent writer of the same record (the repeat sees its row). */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01', UNIQUE_VIOLATION]);
const TRANSACTION_ATTEMPTS = 3;

/** Runs `fn`, and again (up to three attempts in all) after a failure with one of the SQLSTATEs above. */
export async function withRetries<T>(
  label: string,
  fn: () => Promise<T>,
  logger: Logger | undefined,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const code = error instanceof DatabaseError ? error.sqlstate : undefined;
      if (code === undefined || !RETRYABLE_SQLSTATES.has(code) || attempt >= TRANSACTION_ATTEMPTS)
        throw error;
      if (code === UNIQUE_VIOLATION) {
        // Writers racing for a new record: expected, and the repeat sees the other's row.
        logger?.debug(
          { sqlstate: code, attempt, operation: label },
          'another writer stored a record of this write meanwhile: writing it again',
        );
      } else
        logger?.warn({ err: error, sqlstate: code, attempt, operation: label }, 'database write retried');
    }
  }
}
