import { DrizzleQueryError } from 'drizzle-orm/errors';
import { toDatabaseError } from '../db/database-errors.js';
import {
  DatabaseError,
  HttpError,
  LeaseLostError,
  MalformedResponseError,
  NetworkError,
  RetryWaitTooLongError,
} from '../errors.js';

/**
 * The exit code of a run stopped by a signal: 130 for SIGINT, 143 for SIGTERM (128 + signal
 * number, as shells report them). `bin.ts` aborts with an `Error` named after the signal.
 */
export function signalExitCode(signal: AbortSignal): number {
  const reason: unknown = signal.reason;
  const name = reason instanceof Error ? reason.message : String(reason);
  return name === 'SIGTERM' ? 143 : 130;
}

/** The line a command stopped by a signal ends with: `stopped by SIGTERM`. */
export function stoppedLine(signal: AbortSignal): string {
  return `stopped by ${signalExitCode(signal) === 143 ? 'SIGTERM' : 'SIGINT'}`;
}

/**
 * One clear line saying what failed. A database failure is told by its SQLSTATE in words, never
 * by the statement or its parameters; an error of an unknown kind by its first line only. Only a
 * command that syncs (`resumes`) says what became of its checkpoints, and that the next run
 * resumes only where a later run can get past the failure.
 */
export function failureLine(thrown: unknown, options: { resumes?: boolean } = {}): string {
  // `src/db` translates its failures; one that slipped through untranslated still gets words.
  const error = thrown instanceof DrizzleQueryError ? toDatabaseError(thrown) : thrown;
  const message = firstLine(error instanceof Error ? error.message : String(error));
  const resumes = options.resumes === true;
  if (error instanceof LeaseLostError) {
    return `${message} (another sync or a worker is syncing this stream; run again once it is done)`;
  }
  if (error instanceof RetryWaitTooLongError)
    return resumes
      ? `${message}; checkpoints kept, run again after that wait`
      : `${message}; run again after that wait`;
  const after = resumes ? `; ${checkpointsWord(error)}` : '';
  if (
    error instanceof NetworkError ||
    error instanceof HttpError ||
    error instanceof MalformedResponseError
  ) {
    return `the ledger service failed: ${message}${after}`;
  }
  if (error instanceof DatabaseError) return `the database failed: ${message}${after}`;
  return message;
}

/** What a failed sync left: its checkpoints, and whether the next run gets past the failure. */
function checkpointsWord(error: unknown): string {
  const passes = !(error instanceof DatabaseError) || error.retryable;
  return passes
    ? 'checkpoints kept, the next run resumes'
    : 'checkpoints kept; the next run fails the same way until this is fixed';
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
