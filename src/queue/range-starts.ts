/**
 * The first pages the range jobs of a backfill by page number read, kept in Redis so that a range
 * in one worker reads on past where the next range began in another (see `RangeStarts`). One hash
 * per run, expiring a day after its last range began. A Redis failure here costs no range job: a
 * start not known only leaves a gap for the run's check, as it did before the starts were shared.
 */
import type { Redis } from 'ioredis';
import type { RangeStarts } from '../sync/ports/backfill-store.js';

/** How long a run's starts are kept after its last range began. */
const STARTS_TTL_SECONDS = 86_400;

/** The starts of run `backfillId` in Redis, under the queues' `prefix`. */
export function redisRangeStarts(redis: Redis, prefix: string, backfillId: string): RangeStarts {
  const key = `${prefix}:range-starts:${backfillId}`;
  return {
    began: async (page, rawIds) => {
      if (rawIds.length === 0) return;
      await redis
        .multi()
        .hsetnx(key, String(page), String(Math.max(...rawIds)))
        .expire(key, STARTS_TTL_SECONDS)
        .exec()
        .catch(() => undefined);
    },
    topAt: async (page) => {
      const top = await redis.hget(key, String(page)).catch(() => null);
      return top === null ? undefined : Number(top);
    },
  };
}
