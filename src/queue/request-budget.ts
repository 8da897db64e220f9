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

/** Creates the budget under `prefix`; `perSecond` 0 means no rate limit (pauses still apply). */
export function createSharedRequestBudget(input: {
  redis: Redis;
  prefix: string;
  perSecond: number;
}): SharedRequestBudget {
  const windowKey = `${input.prefix}:request-budget:window`;
  const pauseKey = `${input.prefix}:request-budget:pause`;
  const limit = input.perSecond > 0 ? input.perSecond : Number.MAX_SAFE_INTEGER;
  return {
    async take(signal) {
      for (;;) {
        const wait = Number(await input.redis.eval(TAKE, 2, windowKey, pauseKey, String(limit), '1000'));
        if (wait <= 0) return;
        await delay(Math.min(wait, 1000), undefined, signal ? { signal } : undefined);
      }
    },
    async pause(ms) {
      if (ms > 0) await input.redis.eval(PAUSE, 1, pauseKey, String(Math.ceil(ms)));
    },
  };
}
