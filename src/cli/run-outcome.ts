import { HttpError, LeaseLostError, MalformedResponseError, NetworkError } from '../errors.js';

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

/** One clear line saying what failed and that nothing committed was lost. */
export function failureLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof LeaseLostError) return `${message} (another sync is running on this stream)`;
  if (
    error instanceof NetworkError ||
    error instanceof HttpError ||
    error instanceof MalformedResponseError
  ) {
    return `the ledger service failed: ${message}; checkpoints kept, the next run resumes`;
  }
  return message;
}
