/**
 * What the client tells about its requests as they happen, for metrics. The client calls these
 * few functions and knows nothing of how they are counted (`src/metrics` implements them).
 */
export interface ClientObserver {
  /** One attempt ended (retries and hedges are attempts too): its endpoint, outcome and duration. */
  attempt(endpoint: string, outcome: AttemptOutcome, seconds: number): void;
  /** A failed attempt of `endpoint` is about to be retried. */
  retry(endpoint: string): void;
  /** A 429's `Retry-After` paused the request budget for `seconds`. */
  rateLimitPause(seconds: number): void;
  /** An attempt waited this long for the request budget before it could be sent. */
  budgetWait(seconds: number): void;
}

/** How one attempt ended. */
export type AttemptOutcome =
  | 'ok'
  | 'not_found'
  | 'client_error'
  | 'rate_limited'
  | 'server_error'
  | 'timeout'
  | 'network_error'
  | 'malformed'
  | 'too_large'
  | 'aborted';

/** Every outcome, for metrics that list them up front. */
export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = [
  'ok',
  'not_found',
  'client_error',
  'rate_limited',
  'server_error',
  'timeout',
  'network_error',
  'malformed',
  'too_large',
  'aborted',
];
