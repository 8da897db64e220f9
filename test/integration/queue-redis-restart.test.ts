import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { registerSchedules } from '../../src/queue/schedules.js';
import {
  type PrivateRedis,
  provenCount,
  type Setup,
  setUp,
  startPrivateRedis,
  syncToTruth,
} from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';

describe('Redis restarting mid-run', () => {
  let redis: PrivateRedis | undefined;
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
    await redis?.stop();
  });

  it('workers reconnect, the lost queue state is rebuilt from Postgres, and the table ends equal to the service', async () => {
    // A Redis of this test's own, without persistence: a restart loses every job and schedule.
    redis = await startPrivateRedis();
    setup = await setUp(
      'queue-redis-restart',
      { records: 1000, arrivalsPerSecond: 10, seed: 41, faults: { latencyMs: 10 } },
      { redisUrl: redis.url },
    );
    const current = setup;
    const workers = [current.start(), current.start()];
    await Promise.all(workers.map((w) => w.ready));
    await registerSchedules(current.queues, { everyMs: 1000, streams: [{}] });
    await waitFor('some ranges to be stored', async () => (await provenCount(current.db)) >= 5, {
      timeoutMs: 20_000,
    });

    await redis.stop();
    await waitFor(
      'the workers to notice',
      async () => workers.every((w) => /connection error/.test(w.log())),
      { timeoutMs: 10_000 },
    );
    await redis.start();
    // What the scheduler does at every start: register the schedules again.
    await registerSchedules(current.queues, { everyMs: 1000, streams: [{}] });

    await syncToTruth(current, 45_000);
    const rows = await queryRows<{ round: number }>(
      current.db.database.db,
      sql`select round from backfill_runs`,
    );
    assert.ok((rows[0]?.round ?? 0) >= 1, 'a check round was enqueued again after the restart');
  });
});
