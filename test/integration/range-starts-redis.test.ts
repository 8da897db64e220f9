/**
 * The range jobs of a backfill by page number share where they began through Redis: ranges read
 * at once by separate readers (as by separate workers) while records arrive leave no gap for the
 * check, as the lanes of one `sync` do with the starts kept in memory.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createRedisConnection } from '../../src/queue/connection.js';
import { redisRangeStarts } from '../../src/queue/range-starts.js';
import { checkBackfill, fetchRange, planBackfill } from '../../src/sync/backfill/parallel-backfill.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { LiveList, MemoryStore } from '../unit/sync-fakes.js';

const prefix = uniquePrefix('range-starts');
const redis = createRedisConnection(TEST_REDIS_URL, 'producer');
after(async () => {
  redis.disconnect();
  await deletePrefix(TEST_REDIS_URL, prefix);
});

describe('range starts shared in Redis', () => {
  it('ranges read at once by separate readers while records arrive leave no gap for the check', async () => {
    const list = new LiveList({ count: 300 });
    const store = new MemoryStore();
    const plan = await planBackfill({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      id: 'r',
      pagesPerRange: 5,
    });
    assert.ok(plan);
    // A record arrives every third request: the pages drift slower than a range reads them.
    let requests = 0;
    list.afterServe = () => {
      if (++requests % 3 === 0) list.add(1);
    };
    // One reader each, as each range job runs in whichever worker takes it.
    await Promise.all(
      plan.tasks.map((task) =>
        fetchRange({
          store,
          fetchPage: list.fetchPage,
          spec: {},
          backfillId: 'r',
          task,
          starts: redisRangeStarts(redis, prefix, 'r'),
        }),
      ),
    );
    assert.deepEqual(await checkBackfill({ store, syncStore: store, spec: {}, backfillId: 'r', round: 0 }), {
      status: 'done',
      watermark: 300,
    });
    const key = `${prefix}:range-starts:r`;
    assert.equal(await redis.hlen(key), plan.tasks.length);
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
