import { UnrecoverableError } from 'bullmq';
import { HttpError, LeaseLostError, LedgerIndexerError } from '../errors.js';

/**
 * What a processor throws for `error`. The project's own non-retryable errors (bad payload or
 * configuration, a 4xx answer) become an {@link UnrecoverableError} so no attempt is wasted on
 * them; everything else, including a database or Redis connection failing, stays retryable and
 * BullMQ retries the job with backoff.
 */
export function jobFailure(error: unknown): Error {
  if (error instanceof UnrecoverableError) return error;
  if (error instanceof LedgerIndexerError && !error.retryable && !(error instanceof LeaseLostError)) {
    const unrecoverable = new UnrecoverableError(error.message);
    unrecoverable.cause = error;
    return unrecoverable;
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** The pause the service asked for with a 429, or `null` when `error` is not one. */
export function throttlePauseMs(error: unknown, fallbackMs: number): number | null {
  const cause =
    error instanceof Error && error.cause !== undefined && !(error instanceof HttpError)
      ? error.cause
      : error;
  if (cause instanceof HttpError && cause.status === 429) return cause.retryAfterMs ?? fallbackMs;
  return null;
}
