/** Repeating a database write that failed for a reason a second attempt can clear. */
import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { UNIQUE_VIOLATION } from '../sqlstate.js';

/** SQLSTATEs after which a whole transaction is safely repeated: serialization failure, deadlock, and a unique violation from a concurrent writer of the same record (the repeat sees its row). */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01', UNIQUE_VIOLATION]);
/** Attempts in all after a deadlock or a serialization failure. */
const TRANSACTION_ATTEMPTS = 3;
/**
 * Attempts in all after writers raced for new records. Each race has a winner whose rows the
 * repeat sees, but lanes by page number overlap where arrivals shift the pages, and on a machine
 * slow enough a write may lose one race after another to different lanes: seen losing three.
 */
export const RACE_ATTEMPTS = 8;
/** The pause before a repeat after a race, times the attempt, with jitter: the racers part. */
const RACE_PAUSE_MS = 20;

/**
 * Runs `fn`, and again after a failure with one of the SQLSTATEs above: up to three attempts in
 * all after a deadlock or a serialization failure, {@link RACE_ATTEMPTS} after a race.
 */
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
      const raced = code === UNIQUE_VIOLATION;
      if (code === undefined || !RETRYABLE_SQLSTATES.has(code)) throw error;
      if (attempt >= (raced ? RACE_ATTEMPTS : TRANSACTION_ATTEMPTS)) throw error;
      if (raced) {
        // Writers racing for a new record: expected, and the repeat sees the other's row.
        logger?.debug(
          { sqlstate: code, attempt, operation: label },
          'another writer stored a record of this write meanwhile: writing it again',
        );
        await sleep(RACE_PAUSE_MS * attempt * (0.5 + Math.random()));
      } else
        logger?.warn({ err: error, sqlstate: code, attempt, operation: label }, 'database write retried');
    }
  }
}
