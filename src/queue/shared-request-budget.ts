import type { Redis } from 'ioredis';
import type { RequestBudget } from '../client/request-budget.js';
import { type AbortLike, sleep } from '../client/stop-token.js';

/**
 * A request budget shared through Redis by every worker process, so the service sees one client
 * however many workers run: at most `burst + perSecond × T` requests in any T seconds in total,
 * and none at all while a 429 pause is in force. Handed to the client as its `budget`, so every
 * attempt (first tries, retries, hedges, single look-ups) takes from it.
 */
export interface SharedRequestBudget extends RequestBudget {
  /** Resolves when one more request may be sent; an abort rejects with the signal's reason. */
  take(signal?: AbortLike): Promise<void>;
  /** Stops all workers' requests for `ms` (the service said `Retry-After`). */
  pause(ms: number): Promise<void>;
}

/**
 * Grants up to ARGV[3] requests by the generic cell rate algorithm, on Redis's clock so that
 * every process judges by the same time. KEYS[1] holds the time (µs) at which the budget is
 * spent: each grant moves it one interval (ARGV[1] µs) on; a request may go while it lies at most
 * ARGV[2] µs (the burst less one, in intervals) ahead of now. Returns {granted, ms to wait
 * before the next request may go}.
 */
const TAKE = `
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return {0, paused} end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local due = tonumber(redis.call('GET', KEYS[1]) or '0')
if due < now then due = now end
local free = math.floor((tolerance - (due - now)) / interval) + 1
local granted = math.max(0, math.min(tonumber(ARGV[3]), free))
if granted > 0 then
  due = due + granted * interval
  redis.call('SET', KEYS[1], string.format('%.0f', due), 'PX', math.ceil((due - now) / 1000) + 1000)
end
return {granted, math.max(0, math.ceil((due - now - tolerance) / 1000))}`;

// Extends the pause only: a shorter Retry-After never cuts a longer one short.
const PAUSE = `
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 1`;

/** The scripts as ioredis commands: sent by SHA (EVALSHA), the text only once per connection. */
interface BudgetCommands {
  ledgerBudgetTake(
    due: string,
    pause: string,
    intervalUs: string,
    toleranceUs: string,
    want: string,
  ): Promise<[number, number]>;
  ledgerBudgetPause(pause: string, ms: string): Promise<unknown>;
}

function withBudgetCommands(redis: Redis): Redis & BudgetCommands {
  const commands = redis as Redis & Partial<BudgetCommands>;
  if (typeof commands.ledgerBudgetTake !== 'function') {
    redis.defineCommand('ledgerBudgetTake', { numberOfKeys: 2, lua: TAKE });
    redis.defineCommand('ledgerBudgetPause', { numberOfKeys: 1, lua: PAUSE });
  }
  return redis as Redis & BudgetCommands;
}

/**
 * How long an unlimited budget trusts the pause it last read from Redis. A pause set by another
 * process is honoured within this time; until then requests need no Redis round trip at all.
 */
const DEFAULT_PAUSE_CHECK_MS = 200;

/** Requests asked of Redis at once for the callers waiting in one process. */
const MAX_GRANT = 100;

/** Options of {@link createSharedRequestBudget}. */
export interface SharedRequestBudgetInput {
  redis: Redis;
  /** Key prefix (the queues' prefix): workers under one prefix share one budget. */
  prefix: string;
  /** Requests per second, all processes together; 0 means no rate limit (pauses still apply). */
  perSecond: number;
  /** Requests that may go at once after a quiet spell. Default a tenth of `perSecond`, at least 1. */
  burst?: number | undefined;
  /** Unlimited budgets only: how long a pause read from Redis is trusted. Default 200 ms. */
  pauseCheckMs?: number | undefined;
}

/** Creates the budget under `prefix`. */
export function createSharedRequestBudget(input: SharedRequestBudgetInput): SharedRequestBudget {
  const redis = withBudgetCommands(input.redis);
  const pauseKey = `${input.prefix}:request-budget:pause`;
  const setPause = async (ms: number): Promise<void> => {
    if (ms > 0) await redis.ledgerBudgetPause(pauseKey, String(Math.ceil(ms)));
  };
  if (input.perSecond > 0) return rateLimited(redis, input, pauseKey, setPause);
  return pauseOnly(redis, pauseKey, setPause, input.pauseCheckMs ?? DEFAULT_PAUSE_CHECK_MS);
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortLike | undefined;
  onAbort: (() => void) | undefined;
  done: boolean;
}

/**
 * The rate-limited budget. Callers of one process queue up in arrival order and a single loop asks
 * Redis for as many requests as are waiting, so a hundred waiting callers cost one round trip per
 * grant, not a hundred polls.
 */
function rateLimited(
  redis: Redis & BudgetCommands,
  input: SharedRequestBudgetInput,
  pauseKey: string,
  setPause: (ms: number) => Promise<void>,
): SharedRequestBudget {
  const burst = input.burst ?? Math.max(1, Math.ceil(input.perSecond / 10));
  if (!(burst >= 1)) throw new RangeError(`burst must be >= 1 (got ${burst})`);
  const dueKey = `${input.prefix}:request-budget:due`;
  const intervalUs = 1e6 / input.perSecond;
  const interval = String(intervalUs);
  const tolerance = String((burst - 1) * intervalUs);
  let queue: Waiter[] = [];
  let waiting = 0;
  let serving = false;
  // Wakes the loop from its wait once no caller is left (all aborted), so it can end.
  let wake: (() => void) | undefined;

  const settle = (waiter: Waiter): void => {
    waiter.done = true;
    waiting -= 1;
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
  };

  const grant = (count: number): void => {
    let head = 0;
    for (; head < queue.length && count > 0; head++) {
      const waiter = queue[head] as Waiter;
      if (waiter.done) continue;
      settle(waiter);
      waiter.resolve();
      count -= 1;
    }
    queue = queue.slice(head);
  };

  const failAll = (error: unknown): void => {
    for (const waiter of queue) {
      if (waiter.done) continue;
      settle(waiter);
      waiter.reject(error);
    }
    queue = [];
  };

  const idle = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wake = undefined;
    });

  const serve = async (): Promise<void> => {
    serving = true;
    try {
      while (waiting > 0) {
        const want = String(Math.min(waiting, MAX_GRANT));
        const [granted, waitMs] = await redis.ledgerBudgetTake(dueKey, pauseKey, interval, tolerance, want);
        grant(granted);
        if (waiting > 0 && waitMs > 0) await idle(waitMs);
      }
    } catch (error) {
      failAll(error);
    } finally {
      serving = false;
    }
  };

  return {
    take(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { resolve, reject, signal, onAbort: undefined, done: false };
        if (signal) {
          waiter.onAbort = () => {
            if (waiter.done) return;
            settle(waiter);
            reject(signal.reason);
            if (waiting === 0) wake?.();
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        queue.push(waiter);
        waiting += 1;
        if (!serving) void serve();
      });
    },
    pause: setPause,
  };
}

/**
 * No rate to count: only the shared pause matters, read at most once per `checkMs` and shared by
 * every request of this process waiting on it.
 */
function pauseOnly(
  redis: Redis,
  pauseKey: string,
  setPause: (ms: number) => Promise<void>,
  checkMs: number,
): SharedRequestBudget {
  let pausedUntil = 0;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let checking: Promise<void> | null = null;
  const refresh = (): Promise<void> => {
    checking ??= redis
      .pttl(pauseKey)
      .then((left) => {
        checkedAt = Date.now();
        if (left > 0) pausedUntil = Math.max(pausedUntil, checkedAt + left);
      })
      .finally(() => {
        checking = null;
      });
    return checking;
  };
  return {
    async take(signal) {
      for (;;) {
        if (Date.now() - checkedAt >= checkMs) await refresh();
        const wait = pausedUntil - Date.now();
        if (wait <= 0) return;
        await sleep(Math.min(wait, 1000), signal);
      }
    },
    async pause(ms) {
      if (ms <= 0) return;
      pausedUntil = Math.max(pausedUntil, Date.now() + Math.ceil(ms));
      await setPause(ms);
    },
  };
}
