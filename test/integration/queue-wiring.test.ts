import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { main } from '../../src/cli/main.js';
import { loadSchedules } from '../../src/db/stores/wanted-schedules.js';
import { streamKey } from '../../src/domain/stream-key.js';
import { createRedisConnection } from '../../src/queue/connection.js';
import { formatQueueStatus, queueStatus, readQueueStatus } from '../../src/queue/queue-status.js';
import { createLedgerQueues, type LedgerQueues } from '../../src/queue/queues.js';
import { listSchedules, registerSchedules } from '../../src/queue/schedules.js';
import { createSharedRequestBudget } from '../../src/queue/shared-request-budget.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';

async function runCli(argv: string[], env: Record<string, string>): Promise<{ code: number; err: string }> {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await main(argv, {
    env,
    stdout: new PassThrough(),
    stderr,
    signal: new AbortController().signal,
  });
  return { code, err };
}

describe('queue wiring', () => {
  const prefix = uniquePrefix('queue-wiring');
  let redis: Redis;
  let queues: LedgerQueues;
  let db: TestDatabase;

  before(async () => {
    redis = createRedisConnection(TEST_REDIS_URL, 'producer');
    queues = createLedgerQueues({ connection: redis, prefix });
    db = await createTestDatabase();
  });
  after(async () => {
    await queues.close();
    redis.disconnect();
    await deletePrefix(TEST_REDIS_URL, prefix);
    await db.drop();
  });

  it('registering the schedules twice leaves one schedule per stream', async () => {
    const streams = [{}, { account: '0xAbCdEf0000000000000000000000000000000001' }, { account: 'eid1' }];
    await registerSchedules(queues, { everyMs: 30_000, streams });
    await registerSchedules(queues, { everyMs: 30_000, streams });
    const ids = (await listSchedules(queues)).map((s) => s.id).sort();
    assert.deepEqual(
      ids,
      ['reconcile', 'refresh-reference', ...streams.map((stream) => `sync:${streamKey(stream)}`)].sort(),
    );
    // One pending run per schedule, not one per registration.
    const status = await queueStatus(queues);
    const sync = status.find((q) => q.queue === 'ledger-sync');
    assert.equal((sync?.delayed ?? 0) + (sync?.waiting ?? 0), 5);
  });

  it('the schedule command run twice leaves one schedule per stream, in Redis and in PostgreSQL', async () => {
    const cliPrefix = `${prefix}-cli`;
    const env = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: db.url, LOG_LEVEL: 'silent' };
    const argv = ['schedule', '--every', '5s', '--account', 'eid1', '--global', '--queue-prefix', cliPrefix];
    for (let i = 0; i < 2; i++) {
      const { code } = await runCli(argv, env);
      assert.equal(code, 0);
    }
    const cliQueues = createLedgerQueues({ connection: redis, prefix: cliPrefix });
    try {
      const ids = (await listSchedules(cliQueues)).map((s) => s.id).sort();
      assert.deepEqual(
        ids,
        ['reconcile', 'refresh-reference', `sync:${streamKey({ account: 'eid1' })}`, 'sync:txs'].sort(),
      );
      assert.equal((await listSchedules(cliQueues)).find((s) => s.id === 'sync:txs')?.everyMs, 5000);
      const kept = await loadSchedules(db.database.db, cliPrefix);
      assert.deepEqual(
        kept.map((s) => [s.id, s.name, s.everyMs]).sort(),
        [
          ['reconcile', 'reconcile', 30_000],
          ['refresh-reference', 'refresh-reference', 600_000],
          [`sync:${streamKey({ account: 'eid1' })}`, 'sync-stream', 5000],
          ['sync:txs', 'sync-stream', 5000],
        ].sort(),
      );
    } finally {
      await cliQueues.close();
      await deletePrefix(TEST_REDIS_URL, cliPrefix);
    }
  });

  it('schedule without Redis configured names the missing setting', async () => {
    const { code, err } = await runCli(['schedule'], {});
    assert.equal(code, 2);
    assert.match(err, /REDIS_URL/);
  });

  it('the queue status shows depth, active and failed per queue', async () => {
    const result = await readQueueStatus(TEST_REDIS_URL, { prefix });
    assert.ok('queues' in result);
    const sync = result.queues.find((q) => q.queue === 'ledger-sync');
    assert.ok(sync && sync.waiting + sync.delayed >= 5);
    assert.deepEqual(formatQueueStatus({ error: 'connect ECONNREFUSED' }), [
      'queues: unavailable (connect ECONNREFUSED)',
    ]);
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
