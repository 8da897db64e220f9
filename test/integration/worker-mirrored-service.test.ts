import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Job } from 'bullmq';
import { sql } from 'drizzle-orm';
import type { Redis } from 'ioredis';
import { queryRows } from '../../src/db/rows.js';
import { createRedisConnection } from '../../src/queue/connection.js';
import { createLedgerQueues, type LedgerQueues } from '../../src/queue/queues.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  deletePrefix,
  spawnWorker,
  TEST_REDIS_URL,
  uniquePrefix,
  type WorkerProcess,
} from '../helpers/redis.js';
import { runMain } from '../helpers/run-main.js';
import { waitFor } from '../helpers/wait-for.js';

describe('a worker pointed at another service than its database mirrors', () => {
  const prefix = uniquePrefix('worker-mirrored-service');
  let t: TestDatabase;
  let mine: Simulator;
  let other: Simulator;
  let redis: Redis;
  let queues: LedgerQueues;
  let worker: WorkerProcess | undefined;
  let otherUrl: string;

  before(async () => {
    t = await createTestDatabase();
    mine = createSimulator({ records: 150, seed: 61 });
    other = createSimulator({ records: 150, seed: 62 });
    const mineUrl = (await mine.listen()).url;
    otherUrl = (await other.listen()).url;
    redis = createRedisConnection(TEST_REDIS_URL, 'producer');
    queues = createLedgerQueues({ connection: redis, prefix });
    const synced = await runMain(['sync', '--base-url', mineUrl], {
      DATABASE_URL: t.url,
      LOG_LEVEL: 'silent',
    });
    assert.equal(synced.code, 0, synced.err);
  });
  after(async () => {
    if (worker?.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await queues?.close();
    redis?.disconnect();
    await deletePrefix(TEST_REDIS_URL, prefix);
    await mine?.close();
    await other?.close();
    await t?.drop();
  });

  it('fails its jobs at once, without retries, and writes nothing', async () => {
    const before = await queryRows<{ n: string; listed: string | null }>(
      t.database.db,
      sql`SELECT (SELECT count(*)::text FROM ledger_transactions) AS n,
                 (SELECT max(listed_at)::text FROM ledger_tokens) AS listed`,
    );
    worker = spawnWorker({
      env: {
        DATABASE_URL: t.url,
        REDIS_URL: TEST_REDIS_URL,
        LEDGER_BASE_URL: otherUrl,
        LEDGER_REQUESTS_PER_SECOND: '0',
      },
      args: ['--queue-prefix', prefix],
    });
    await worker.ready;
    await queues.add('sync-stream', { stream: {} }, { jobId: 'tail' });
    await queues.add('refresh-reference', {}, { jobId: 'reference' });
    const failed = await waitFor('both jobs to fail', async () => {
      const jobs = await queues.sync.getFailed();
      return jobs.length === 2 ? jobs : undefined;
    });
    for (const job of failed as Job[]) {
      assert.equal(job.attemptsMade, 1, `${job.id} is not retried`);
      assert.match(
        job.failedReason,
        /^the database mirrors another ledger service \(.*\): .* does not know its record rawId \d+/,
      );
    }
    assert.match(worker.log(), /"level":50.*mirrors another ledger service/);
    const after = await queryRows<{ n: string; listed: string | null }>(
      t.database.db,
      sql`SELECT (SELECT count(*)::text FROM ledger_transactions) AS n,
                 (SELECT max(listed_at)::text FROM ledger_tokens) AS listed`,
    );
    assert.deepEqual(after, before);
    assert.equal(other.stats()['GET /txs'], undefined, 'no page read from the other service');
  });
});
