/**
 * PostgreSQL restarting while a range job's commit is in flight: the worker must outlive the
 * dropped connection (the commit fails and the job runs again), never crash. The restart is
 * timed by holding a lock the commit waits on, so it is in flight for sure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { createRedisConnection } from '../../src/queue/connection.js';
import { createLedgerQueues } from '../../src/queue/queues.js';
import { createSimulator } from '../../src/simulator/index.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { deletePrefix, spawnWorker, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';
import { assertMirrorsTruth } from './sync-truth.js';

let server: PrivatePostgres;
let database: Database;

before(async () => {
  server = await startPrivatePostgres();
  database = await openDatabase({ databaseUrl: server.url, maxConnections: 2 });
});

after(async () => {
  await database?.close();
  await server?.destroy();
});

/**
 * Blocks every write to the records until the restart (reads go on), then restarts the server as
 * soon as a write of the indexer (a range commit: one statement, its own transaction) waits on
 * that lock.
 */
async function restartUnderTransaction(): Promise<void> {
  const blocker = new pg.Client({ connectionString: server.url });
  blocker.on('error', () => undefined);
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE ledger_transactions IN EXCLUSIVE MODE');
  await waitFor(
    'a write of the indexer to wait on the lock',
    async () => {
      const rows = await queryRows<{ n: number }>(
        database.db,
        sql`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE application_name = 'ledger-indexer' AND pid <> pg_backend_pid()
              AND wait_event_type = 'Lock'`,
      );
      return (rows[0]?.n ?? 0) > 0;
    },
    { timeoutMs: 30_000 },
  );
  await server.restart('fast');
  await blocker.end().catch(() => undefined);
}

describe('PostgreSQL restarting under a transaction in flight', () => {
  it('a worker stays up, its interrupted job runs again, and the backfill completes exactly', async () => {
    // Page numbers: the workers backfill with range jobs, whose commit the restart interrupts.
    const sim = createSimulator({ records: 800, seed: 61, paging: 'page', faults: { latencyMs: 10 } });
    const { url } = await sim.listen();
    const prefix = uniquePrefix('postgres-restart');
    const connection = createRedisConnection(TEST_REDIS_URL, 'producer');
    const queues = createLedgerQueues({ connection, prefix });
    const worker = spawnWorker({
      env: {
        DATABASE_URL: server.url,
        REDIS_URL: TEST_REDIS_URL,
        LEDGER_BASE_URL: url,
        LEDGER_REQUESTS_PER_SECOND: '0',
      },
      args: ['--queue-prefix', prefix, '--concurrency', '3', '--pages-per-range', '8', '--lock-ms', '3000'],
    });
    try {
      await worker.ready;
      await queues.add('sync-stream', { stream: {} });
      await restartUnderTransaction();
      await waitFor(
        'the backfill to be proven complete',
        async () => {
          if (worker.child.exitCode !== null)
            throw new Error(`the worker died:\n${worker.log().slice(-2000)}`);
          const rows = await queryRows<{ status: string }>(
            database.db,
            sql`SELECT status FROM backfill_runs ORDER BY created_at DESC LIMIT 1`,
          ).catch(() => []);
          return rows[0]?.status === 'done';
        },
        { timeoutMs: 60_000, everyMs: 200 },
      );
      await assertMirrorsTruth(database.db, sim);
      worker.child.kill('SIGTERM');
      assert.equal((await worker.exited).code, 0, 'the worker drains and exits 0');
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await worker.exited;
      await queues.close();
      connection.disconnect();
      await deletePrefix(TEST_REDIS_URL, prefix).catch(() => undefined);
      await sim.close();
    }
  });
});
