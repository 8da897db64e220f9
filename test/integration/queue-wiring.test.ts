import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { createRedisConnection } from '../../src/queue/connection.js';
import { queueStatus } from '../../src/queue/queue-status.js';
import { createLedgerQueues, type LedgerQueues } from '../../src/queue/queues.js';
import { createSharedRequestBudget } from '../../src/queue/request-budget.js';
import { listSchedules, registerSchedules } from '../../src/queue/schedules.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';

describe('queue wiring', () => {
  const prefix = uniquePrefix('queue-wiring');
  let redis: Redis;
  let queues: LedgerQueues;

  before(() => {
    redis = createRedisConnection(TEST_REDIS_URL, 'producer');
    queues = createLedgerQueues({ connection: redis, prefix });
  });
  after(async () => {
    await queues.close();
    redis.disconnect();
    await deletePrefix(TEST_REDIS_URL, prefix);
  });

  it('registering the schedules twice leaves one schedule per stream', async () => {
    const streams = [{}, { account: '0xAbCdEf0000000000000000000000000000000001' }, { account: 'eid1' }];
    await registerSchedules(queues, { everyMs: 30_000, streams });
    await registerSchedules(queues, { everyMs: 30_000, streams });
    const ids = (await listSchedules(queues)).map((s) => s.id).sort();
    assert.deepEqual(ids, [
      'reconcile',
      'refresh-reference',
      'sync:account:0xabcdef0000000000000000000000000000000001',
      'sync:account:eid1',
      'sync:txs',
    ]);
    // One pending run per schedule, not one per registration.
    const status = await queueStatus(queues);
    const sync = status.find((q) => q.queue === 'ledger-sync');
    assert.equal((sync?.delayed ?? 0) + (sync?.waiting ?? 0), 5);
  });

  it('a changed period updates the existing schedule', async () => {
    await registerSchedules(queues, { everyMs: 60_000, streams: [{}] });
    const schedules = await listSchedules(queues);
    assert.equal(schedules.find((s) => s.id === 'sync:txs')?.everyMs, 60_000);
    assert.equal(schedules.filter((s) => s.id === 'sync:txs').length, 1);
  });

  it('a stream has at most one sync job waiting however often it is asked for', async () => {
    for (let i = 0; i < 5; i++) {
      await queues.add(
        'sync-stream',
        { stream: { account: 'eid7' } },
        { deduplicationId: 'stream:account:eid7' },
      );
    }
    const waiting = await queues.sync.getJobs(['waiting', 'prioritized']);
    assert.equal(
      waiting.filter((j) => j.name === 'sync-stream' && j.data.stream?.account === 'eid7').length,
      1,
    );
  });

  it('the request budget is shared: two holders together stay within the rate', async () => {
    const other = createRedisConnection(TEST_REDIS_URL, 'producer');
    try {
      const a = createSharedRequestBudget({ redis, prefix, perSecond: 20 });
      const b = createSharedRequestBudget({ redis: other, prefix, perSecond: 20 });
      const started = Date.now();
      await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).take()));
      // 50 requests at 20 a second need at least two full windows after the first.
      assert.ok(Date.now() - started >= 1900, `50 requests took only ${Date.now() - started} ms`);
    } finally {
      other.disconnect();
    }
  });

  it('a pause holds every holder of the budget until it ends', async () => {
    const budget = createSharedRequestBudget({ redis, prefix: `${prefix}-pause`, perSecond: 0 });
    await budget.pause(400);
    const started = Date.now();
    await budget.take();
    assert.ok(Date.now() - started >= 350);
  });
});
