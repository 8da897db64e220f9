import pRetry from 'p-retry';
import { HttpError, isRetryable, NetworkError, RetryWaitTooLongError, TimeoutError } from '../errors.js';
import { attempt, type TransportState } from './http-attempt.js';
import type { HttpRequest } from './http-types.js';
import { retryDelayMs } from './retry-after.js';
import { sleep } from './stop-token.js';

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Attempts 2 and later, run by p-retry once the first attempt has failed with `first`. The
 * signal is honoured by each step (budget wait, attempt, backoff, the check before a retry),
 * which also covers the client's own stop tokens that p-retry's `signal` would not take.
 */
export async function retry<T>(
  state: TransportState,
  request: HttpRequest<T>,
  url: string,
  first: unknown,
): Promise<T> {
  const { retries } = state.options;
  if (retries === 0 || !(await beforeRetry(state, request, url, { error: first, attempt: 1 }))) {
    throw first;
  }
  return pRetry(() => attempt(state, request, url), {
    retries: retries - 1,
    minTimeout: 0,
    shouldRetry: ({ error, attemptNumber }) =>
      beforeRetry(state, request, url, { error, attempt: attemptNumber + 1 }),
  });
}

/**
 * Decides whether to retry after failed attempt number `attempt` (1-based), and if so logs it
 * and waits. The delay is ours rather than p-retry's so that a Retry-After replaces the backoff
 * instead of adding to it, and so the log can say how long the wait is.
 */
async function beforeRetry(
  state: TransportState,
  request: HttpRequest<unknown>,
  url: string,
  failure: { error: unknown; attempt: number },
): Promise<boolean> {
  const { options, counters } = state;
  const { error, attempt: attemptNumber } = failure;
  if (request.signal?.aborted) throw request.signal.reason;
  if (!worthRetrying(error, request.idempotent ?? true)) return false;
  const asked = error instanceof HttpError ? error.retryAfterMs : undefined;
  if (error instanceof HttpError && asked !== undefined && asked > options.maxRetryWaitMs)
    throw new RetryWaitTooLongError({ waitMs: asked, maxWaitMs: options.maxRetryWaitMs, cause: error });
  const delayMs = retryDelayMs({
    retry: attemptNumber - 1,
    minMs: options.retryMinMs,
    maxMs: options.retryMaxMs,
    retryAfterMs: asked,
    maxRetryWaitMs: options.maxRetryWaitMs,
  });
  counters.retries += 1;
  options.observer?.retry(request.endpoint ?? 'other');
  options.logger.warn(
    {
      url,
      status: error instanceof HttpError ? error.status : undefined,
      attempt: attemptNumber,
      delay_ms: delayMs,
      retry_after_ms: asked,
      error: error instanceof Error ? error.name : typeof error,
      message: error instanceof Error ? error.message : String(error),
    },
    'ledger request failed, retrying',
  );
  if (delayMs > 0) await sleep(delayMs, request.signal);
  return true;
}

/**
 * Whether a failure may be retried. A request that is not idempotent is retried only when the
 * failure proves the service did not act: a 429, or a connection that was never made.
 */
function worthRetrying(error: unknown, idempotent: boolean): boolean {
  if (!isRetryable(error)) return false;
  if (idempotent) return true;
  if (error instanceof HttpError) return error.status === 429;
  if (error instanceof NetworkError && !(error instanceof TimeoutError)) {
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    return typeof code === 'string' && NOT_SENT_CODES.has(code);
  }
  return false;
}
