/**
 * Reads a `Retry-After` header: delay-seconds (`120`, tolerated `1.5`) or an HTTP date. Returns
 * the wait in milliseconds (0 for a date already past), or `undefined` when absent or unreadable.
 */
export function parseRetryAfter(
  value: string | string[] | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // Only a real date (it names a weekday or month), not any text Date.parse happens to accept.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** How long to wait before retry number `retry` (0-based) of a transient failure. */
export interface RetryDelayInput {
  /** 0 for the first retry. */
  retry: number;
  minMs: number;
  maxMs: number;
  /** What the service asked for (`Retry-After`), when it did. */
  retryAfterMs?: number | undefined;
  /** The longest `Retry-After` waited for (a longer one ends the request: `RetryWaitTooLongError`). */
  maxRetryWaitMs: number;
  /** A number in [0, 1); `Math.random` unless a test fixes it. */
  random?: number;
}

/**
 * Exponential backoff with jitter: the ceiling doubles per retry from `minMs` up to `maxMs`, and
 * the delay is drawn from its upper half, so concurrent callers spread out without any of them
 * retrying at once. A `Retry-After` wins when longer, up to `maxRetryWaitMs`.
 */
export function retryDelayMs(input: RetryDelayInput): number {
  const ceiling = Math.min(input.maxMs, input.minMs * 2 ** Math.max(0, input.retry));
  const random = input.random ?? Math.random();
  const backoff = Math.round(ceiling / 2 + (random * ceiling) / 2);
  if (input.retryAfterMs === undefined) return backoff;
  return Math.max(backoff, Math.min(input.retryAfterMs, input.maxRetryWaitMs));
}
