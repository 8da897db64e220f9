import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Redis } from 'ioredis';
import { queryRows } from '../../src/db/rows.js';
import { createRedisConnection } from '../../src/queue/connection.js';
import { createLedgerQueues, type LedgerQueues } from '../../src/queue/queues.js';
import type { Simulator } from '../../src/simulator/index.js';
import { createSimulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  deletePrefix,
  spawnWorker,
  TEST_REDIS_URL,
  uniquePrefix,
  type WorkerProcess,
  waitFor,
} from '../helpers/redis.js';

/** One isolated production shape: its own database, queue prefix and simulator. */
interface Setup {
  db: TestDatabase;
  sim: Simulator;
  url: string;
  prefix: string;
  redis: Redis;
  queues: LedgerQueues;
  workers: WorkerProcess[];
  start(args?: string[]): WorkerProcess;
  close(): Promise<void>;
}

async function setUp(name: string, simOptions: Parameters<typeof createSimulator>[0]): Promise<Setup> {
  const db = await createTestDatabase();
  const sim = createSimulator(simOptions);
  const { url } = await sim.listen();
  const prefix = uniquePrefix(name);
  const redis = createRedisConnection(TEST_REDIS_URL, 'producer');
  const queues = createLedgerQueues({ connection: redis, prefix });
  const workers: WorkerProcess[] = [];
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RETRY_MIN_MS: '20',
    LEDGER_RETRY_MAX_MS: '200',
    LEDGER_REQUEST_TIMEOUT_MS: '2000',
  };
  return {
    db,
    sim,
    url,
    prefix,
    redis,
    queues,
    workers,
    start(args = []) {
      const worker = spawnWorker({
        env,
        args: [
          '--queue-prefix',
          prefix,
          '--concurrency',
          '3',
          '--pages-per-range',
          '8',
          '--lock-ms',
          '3000',
          '--lease-ms',
          '4000',
          ...args,
        ],
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exited));
      await queues.close();
      redis.disconnect();
      await deletePrefix(TEST_REDIS_URL, prefix);
      await sim.close();
      await db.drop();
    },
  };
}

async function backfillStatus(db: TestDatabase): Promise<string | undefined> {
  const rows = await queryRows<{ status: string }>(
    db.database.db,
    sql`select status from backfill_runs order by created_at desc limit 1`,
  );
  return rows[0]?.status;
}

async function watermark(db: TestDatabase): Promise<number | null> {
  const rows = await queryRows<{ watermark: string | null }>(
    db.database.db,
    sql`select watermark::text as watermark from sync_streams where key = 'txs'`,
  );
  return rows[0]?.watermark == null ? null : Number(rows[0].watermark);
}

async function storedRawIds(db: TestDatabase): Promise<number[]> {
  const rows = await queryRows<{ raw_id: string }>(
    db.database.db,
    sql`select raw_id::text as raw_id from ledger_transactions order by raw_id`,
  );
  return rows.map((r) => Number(r.raw_id));
}

/** Backfills with the running workers, then stops arrivals and tails once: the table must equal the truth. */
async function syncToTruth(setup: Setup, timeoutMs: number): Promise<void> {
  await setup.queues.add('sync-stream', { stream: {} });
  try {
    await waitFor(
      'the backfill to be proven complete',
      async () => (await backfillStatus(setup.db)) === 'done',
      { timeoutMs },
    );
  } catch (error) {
    for (const worker of setup.workers) process.stderr.write(worker.log().slice(-3000));
    throw error;
  }
  setup.sim.pauseArrivals();
  const head = setup.sim.headRawId();
  await waitFor(
    'the tail to reach the head',
    async () => {
      const mark = await watermark(setup.db);
      if (mark !== null && mark >= head) return true;
      await setup.queues.add('sync-stream', { stream: {} }, { deduplicationId: 'tail' });
      return false;
    },
    { timeoutMs: 20_000, everyMs: 500 },
  );
  const truth = [...setup.sim.records()].map((r) => r.rawId);
  const stored = await storedRawIds(setup.db);
  const have = new Set(stored);
  const known = new Set(truth);
  assert.deepEqual(
    { missing: truth.filter((id) => !have.has(id)), extra: stored.filter((id) => !known.has(id)) },
    { missing: [], extra: [] },
  );
}

describe('workers backfill in parallel', () => {
  let setup: Setup;
  before(async () => {
    setup = await setUp('worker-backfill', { records: 2500, arrivalsPerSecond: 40, seed: 11 });
  });
  after(async () => {
    await setup?.close();
  });

  it('three worker processes mirror a growing list exactly, with the proof of completeness recorded', async () => {
    await Promise.all([setup.start(), setup.start(), setup.start()].map((w) => w.ready));
    await syncToTruth(setup, 40_000);
    const ranges = await queryRows<{ n: string }>(
      setup.db.database.db,
      sql`select count(*)::text as n from backfill_proven_ranges where stream_key = 'txs'`,
    );
    assert.ok(Number(ranges[0]?.n) > 0);
  });
});
