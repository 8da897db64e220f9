/**
 * The range jobs of a backfill by page number share where they began through Redis: ranges read
 * at once by separate readers (as by separate workers) while records arrive leave no gap for the
 * check, as the lanes of one `sync` do with the starts kept in memory.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createRedisConnection } from '../../src/queue/connection.js';
import { redisRangeStarts } from '../../src/queue/range-starts.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { oneEveryThirdRequest, readRangesAtOnce } from '../unit/ranges-at-once.js';

const prefix = uniquePrefix('range-starts');
const redis = createRedisConnection(TEST_REDIS_URL, 'producer');
after(async () => {
  redis.disconnect();
  await deletePrefix(TEST_REDIS_URL, prefix);
});

describe('range starts shared in Redis', () => {
  it('ranges read at once by separate readers while records arrive leave no gap for the check', async () => {
    // One reader each, as each range job runs in whichever worker takes it.
    const { tasks, outcome } = await readRangesAtOnce({
      id: 'r',
      arrive: oneEveryThirdRequest(),
      startsOf: () => redisRangeStarts(redis, prefix, 'r'),
    });
    assert.deepEqual(outcome, { status: 'done', watermark: 300 });
    const key = `${prefix}:range-starts:r`;
    assert.equal(await redis.hlen(key), tasks.length);
    assert.ok((await redis.ttl(key)) > 0, 'the starts expire');
  });

  it('a Redis that cannot answer leaves the range to end at its last page', async () => {
    const closed = createRedisConnection(TEST_REDIS_URL, 'producer');
    closed.disconnect();
    const starts = redisRangeStarts(closed, prefix, 'gone');
    await starts.began(3, [10, 20]);
    assert.equal(await starts.topAt(3), undefined);
  });
});
