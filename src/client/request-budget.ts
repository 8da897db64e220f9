/** A client-side request budget: every request sent (retries included) takes one token first. */
export interface RequestBudget {
  /**
   * Resolves when the caller may send one request. Callers are served in arrival order, so 200
   * concurrent callers are paced fairly; an aborted wait rejects with the signal's reason.
   */
  take(signal?: AbortSignal): Promise<void>;
}

/** Options of {@link createRequestBudget}. */
export interface RequestBudgetOptions {
  /** Sustained requests per second; 0 = unlimited. */
  requestsPerSecond: number;
  /** Requests that may go at once after a quiet spell. Default: a tenth of a second's worth, at least 1. */
  burst?: number | undefined;
  /** Monotonic clock in milliseconds; tests may pass their own. */
  now?: () => number;
}

const NOW = (): Promise<void> => Promise.resolve();

/**
 * A token bucket by reservation: each `take` books the next free slot at once and waits for it,
 * so order is first come, first served and no caller polls. In any window of T seconds at most
 * `burst + requestsPerSecond * T` requests go out.
 */
export function createRequestBudget(options: RequestBudgetOptions): RequestBudget {
  const rate = options.requestsPerSecond;
  if (!(rate >= 0) || !Number.isFinite(rate))
    throw new RangeError(`requestsPerSecond must be >= 0 (got ${rate})`);
  if (rate === 0) return { take: NOW };
  const burst = options.burst ?? Math.max(1, Math.ceil(rate / 10));
  if (!(burst >= 1)) throw new RangeError(`burst must be >= 1 (got ${burst})`);
  const now = options.now ?? (() => performance.now());

  let tokens = burst;
  let last = now();

  return {
    take(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const t = now();
      tokens = Math.min(burst, tokens + ((t - last) * rate) / 1000);
      last = t;
      tokens -= 1;
      if (tokens >= 0) return NOW();
      // Negative tokens are slots booked by earlier callers; this one waits behind them.
      const waitMs = Math.ceil((-tokens * 1000) / rate);
      return new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          clearTimeout(timer);
          reject(signal?.reason);
        };
        const timer = setTimeout(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, waitMs);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}
