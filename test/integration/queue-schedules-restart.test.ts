import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { main } from '../../src/cli/main.js';
import { queryRows } from '../../src/db/rows.js';
import { listSchedules } from '../../src/queue/schedules.js';
import { type PrivateRedis, type Setup, setUp, startPrivateRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';

describe('Redis restarting without its data', () => {
  let redis: PrivateRedis | undefined;
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
    await redis?.stop();
  });

  it('a running worker registers the schedules kept in PostgreSQL again, and jobs run again', async () => {
    // A Redis of this test's own, without persistence: a restart loses every job and scheduler.
    redis = await startPrivateRedis();
    setup = await setUp('queue-schedules-restart', { records: 60, seed: 12 }, { redisUrl: redis.url });
    const current = setup;
    const worker = current.start();
    await worker.ready;
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const code = await main(['schedule', '--every', '1s', '--queue-prefix', current.prefix], {
      env: { DATABASE_URL: current.db.url, REDIS_URL: redis.url, LOG_LEVEL: 'silent' },
      stdout: new PassThrough(),
      stderr,
      signal: new AbortController().signal,
    });
    assert.equal(code, 0, err);
    const runsSince = async (since: Date) =>
      (
        await queryRows<{ n: number }>(
          current.db.database.db,
          sql`SELECT count(*)::int AS n FROM sync_runs WHERE outcome = 'ok' AND started_at > ${since.toISOString()}::timestamptz`,
        )
      )[0]?.n ?? 0;
    await waitFor('a scheduled sync to run', async () => (await runsSince(new Date(0))) > 0);

    await redis.stop();
    await waitFor('the worker to notice', async () => /connection error/.test(worker.log()), {
      timeoutMs: 10_000,
    });
    await redis.start();
    const restarted = new Date();

    // Nobody runs `schedule` again: the worker must bring the schedulers back by itself.
    await waitFor('a scheduled sync to run after the restart', async () => (await runsSince(restarted)) > 0, {
      timeoutMs: 30_000,
    });
    const ids = (await listSchedules(current.queues)).map((s) => s.id).sort();
    assert.deepEqual(ids, ['reconcile', 'refresh-reference', 'sync:txs']);
    assert.match(worker.log(), /"reason":"reconnect".*"msg":"schedules registered"/);
  });
});
