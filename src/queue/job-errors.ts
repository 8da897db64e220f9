import { UnrecoverableError } from 'bullmq';
import { HttpError, isRetryable, LeaseLostError } from '../errors.js';

/**
 * What a processor throws for `error`: retryable errors as they are (BullMQ retries the job with
 * backoff), everything else as an {@link UnrecoverableError} so no attempt is wasted on it.
 */
export function jobFailure(error: unknown): Error {
  if (isRetryable(error) || error instanceof LeaseLostError) return error as Error;
  if (error instanceof UnrecoverableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const unrecoverable = new UnrecoverableError(message);
  unrecoverable.cause = error;
  return unrecoverable;
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
