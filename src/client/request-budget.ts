import type { AbortLike } from './stop-token.js';

/** A client-side request budget: every request sent (retries included) takes one token first. */
export interface RequestBudget {
  /**
   * Resolves when the caller may send one request. Waiting callers are served in arrival order,
   * so 200 concurrent callers are paced fairly; an aborted wait rejects with the signal's reason
   * and takes no token.
   */
  take(signal?: AbortLike): Promise<void>;
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

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortLike | undefined;
  onAbort: (() => void) | undefined;
  done: boolean;
}

const GO = (): Promise<void> => Promise.resolve();

/**
 * A token bucket with a first-come-first-served queue and one timer. Tokens are counted from the
 * clock when they are handed out, never booked ahead, so a late timer or a stalled event loop
 * cannot release more than `burst + requestsPerSecond * T` requests in any T seconds.
 */
export function createRequestBudget(options: RequestBudgetOptions): RequestBudget {
  const rate = options.requestsPerSecond;
  if (!(rate >= 0) || !Number.isFinite(rate))
    throw new RangeError(`requestsPerSecond must be >= 0 (got ${rate})`);
  if (rate === 0) return { take: GO };
  const burst = options.burst ?? Math.max(1, Math.ceil(rate / 10));
  if (!(burst >= 1)) throw new RangeError(`burst must be >= 1 (got ${burst})`);
  const now = options.now ?? (() => performance.now());

  let tokens = burst;
  let last = now();
  let queue: Waiter[] = [];
  let head = 0;
  let timer: NodeJS.Timeout | undefined;

  const refill = (): void => {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - last) * rate) / 1000);
    last = t;
  };

  const drain = (): void => {
    timer = undefined;
    refill();
    while (head < queue.length && tokens >= 1) {
      const waiter = queue[head++] as Waiter;
      if (waiter.done) continue;
      waiter.done = true;
      tokens -= 1;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    if (head === queue.length) {
      queue = [];
      head = 0;
      return;
    }
    // Under steady load the queue may never empty: drop the served part now and then.
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    schedule();
  };

  const schedule = (): void => {
    if (timer !== undefined) return;
    timer = setTimeout(drain, Math.max(1, Math.ceil(((1 - tokens) * 1000) / rate)));
  };

  return {
    take(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      refill();
      if (head === queue.length && tokens >= 1) {
        tokens -= 1;
        return GO();
      }
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { resolve, reject, signal, onAbort: undefined, done: false };
        if (signal) {
          waiter.onAbort = () => {
            if (waiter.done) return;
            waiter.done = true;
            reject(signal.reason);
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        queue.push(waiter);
        schedule();
      });
    },
  };
}
