import { type AbortLike, sleep } from './stop-token.js';

/** A client-side request budget: every request sent (retries included) takes one token first. */
export interface RequestBudget {
  /**
   * Resolves when the caller may send one request. Waiting callers are served in arrival order,
   * so 200 concurrent callers are paced fairly; an aborted wait rejects with the signal's reason
   * and takes no token.
   */
  take(signal?: AbortLike): Promise<void>;
  /**
   * Holds back every request for `ms`: the service answered 429 with `Retry-After`, and it counts
   * its limit per client, not per request. A shorter pause never cuts a longer one short. A budget
   * without it is not paused (each request still waits for its own retry).
   */
  pause?(ms: number): void | Promise<void>;
}

/** Options of {@link createRequestBudget}. */
export interface RequestBudgetOptions {
  /** Sustained requests per second; 0 = unlimited. */
  requestsPerSecond: number;
  /**
   * Requests that may go at once after a quiet spell. Default a twentieth of a second's worth, at
   * least 1 (3 at 50 a second). Bursts of a tenth (5) after each stall of the event loop reached a
   * service limiting each second to 60 together with the steady requests: 3 and 14 of 1,020 were
   * refused in two backfills 200 ms away, each refusal pausing every request for its
   * `Retry-After`; at 3, 2 and 0; at 1, none, but a stall then loses its share of the budget.
   */
  burst?: number | undefined;
  /** Monotonic clock in milliseconds; tests may pass their own (pauses wait on real timers). */
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
 * cannot release more than `burst + requestsPerSecond * T` requests in any T seconds. While a
 * pause lasts, nothing is released.
 */
export function createRequestBudget(options: RequestBudgetOptions): RequestBudget {
  const rate = options.requestsPerSecond;
  if (!(rate >= 0) || !Number.isFinite(rate))
    throw new RangeError(`requestsPerSecond must be >= 0 (got ${rate})`);
  const now = options.now ?? (() => performance.now());
  let pausedUntil = Number.NEGATIVE_INFINITY;
  const pause = (ms: number): void => {
    if (ms > 0) pausedUntil = Math.max(pausedUntil, now() + ms);
  };
  // Unlimited: only a pause holds requests back; an extended one is waited out too.
  const pauseOver = async (signal: AbortLike | undefined): Promise<void> => {
    for (let wait = pausedUntil - now(); wait > 0; wait = pausedUntil - now()) await sleep(wait, signal);
  };
  if (rate === 0) return { take: (signal) => (pausedUntil > now() ? pauseOver(signal) : GO()), pause };
  const burst = options.burst ?? Math.max(1, Math.ceil(rate / 20));
  if (!(burst >= 1)) throw new RangeError(`burst must be >= 1 (got ${burst})`);

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
    if (pausedUntil > now()) {
      schedule();
      return;
    }
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
    const pausedFor = pausedUntil - now();
    const waitMs = pausedFor > 0 ? pausedFor : ((1 - tokens) * 1000) / rate;
    timer = setTimeout(drain, Math.max(1, Math.ceil(waitMs)));
  };

  return {
    take(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      refill();
      if (head === queue.length && tokens >= 1 && !(pausedUntil > last)) {
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
    pause,
  };
}
