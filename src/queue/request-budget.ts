import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/**
 * A request budget shared through Redis by every worker process, so the service sees one client
 * however many workers run: at most `perSecond` requests a second in total, and none at all while
 * a 429 pause is in force.
 */
export interface SharedRequestBudget {
  /** Resolves when one more request may be sent. */
  take(signal?: AbortSignal): Promise<void>;
  /** Stops all workers' requests for `ms` (the service said `Retry-After`). */
  pause(ms: number): Promise<void>;
}

// Returns 0 when a request may go now, else the milliseconds to wait.
const TAKE = `
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return paused end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); left = tonumber(ARGV[2]) end
  return left
end
return 0`;

// Extends the pause only: a shorter Retry-After never cuts a longer one short.
const PAUSE = `
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 1`;

/** The scripts as ioredis commands: sent by SHA (EVALSHA), the text only once per connection. */
interface BudgetCommands {
  ledgerBudgetTake(window: string, pause: string, limit: string, windowMs: string): Promise<unknown>;
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

/** Creates the budget under `prefix`; `perSecond` 0 means no rate limit (pauses still apply). */
export function createSharedRequestBudget(input: {
  redis: Redis;
  prefix: string;
  perSecond: number;
  /** Unlimited budgets only: how long a pause read from Redis is trusted. Default 200 ms. */
  pauseCheckMs?: number | undefined;
}): SharedRequestBudget {
  const redis = withBudgetCommands(input.redis);
  const windowKey = `${input.prefix}:request-budget:window`;
  const pauseKey = `${input.prefix}:request-budget:pause`;
  const sleep = (ms: number, signal?: AbortSignal) =>
    delay(Math.min(ms, 1000), undefined, signal ? { signal } : undefined);
  const pause = async (ms: number): Promise<void> => {
    if (ms > 0) await redis.ledgerBudgetPause(pauseKey, String(Math.ceil(ms)));
  };
  if (input.perSecond > 0) {
    const limit = String(input.perSecond);
    return {
      async take(signal) {
        for (;;) {
          const wait = Number(await redis.ledgerBudgetTake(windowKey, pauseKey, limit, '1000'));
          if (wait <= 0) return;
          await sleep(wait, signal);
        }
      },
      pause,
    };
  }
  // No rate to count: only the shared pause matters, read at most once per `pauseCheckMs` and
  // shared by every request of this process waiting on it.
  const checkMs = input.pauseCheckMs ?? DEFAULT_PAUSE_CHECK_MS;
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
        await sleep(wait, signal);
      }
    },
    async pause(ms) {
      if (ms <= 0) return;
      pausedUntil = Math.max(pausedUntil, Date.now() + Math.ceil(ms));
      await pause(ms);
    },
  };
}
