import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { holdRunnerLock, isRunnerGone } from '../../src/db/stores/runner-lock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

describe('runner liveness locks on PostgreSQL', () => {
  let t: TestDatabase;
  /** The runner's own process: a pool of its own, as another process would have. */
  let runner: Database;
  before(async () => {
    t = await createTestDatabase();
    runner = await openDatabase({ databaseUrl: t.url, maxConnections: 2 });
  });
  after(async () => {
    await runner.close();
    await t.drop();
  });

  it('tells a live runner from one that let go, waiting for one that is about to', async () => {
    const lock = await holdRunnerLock(runner, 'sync:h:1:a');
    assert.equal(lock.held, true);
    assert.equal(await isRunnerGone(t.database, 'sync:h:1:a', 100), false, 'alive while it holds the lock');
    assert.equal(await isRunnerGone(t.database, 'sync:h:1:b', 100), true, 'another owner is not it');
    const waiting = isRunnerGone(t.database, 'sync:h:1:a', 20_000);
    await lock.release();
    const started = Date.now();
    assert.equal(await waiting, true, 'gone as soon as it lets go');
    assert.ok(Date.now() - started < 5_000);
    // Released with its connection back in the pool: the pooled session kept nothing.
    assert.equal(await isRunnerGone(t.database, 'sync:h:1:a', 100), true);
  });

  it('takes a runner whose session the server ended for gone', async () => {
    const lock = await holdRunnerLock(runner, 'sync:h:2:a');
    assert.equal(lock.held, true);
    await t.database.db.execute(sql`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid IN (
        SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted)`);
    assert.equal(await isRunnerGone(t.database, 'sync:h:2:a', 5_000), true);
    await lock.release();
  });
});
