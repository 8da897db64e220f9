/**
 * The read API's pool on PostgreSQL: its sessions are read-only and time out, so a look-up, one
 * statement, is sent alone (one round trip) and is still both; an answer of several statements
 * keeps its READ ONLY, REPEATABLE READ transaction; the embedded database, whose one connection
 * also writes, reads in a transaction every time.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { READ_API_DATABASE } from '../../src/app/http-routes.js';
import { COVERAGE_REUSE_MS } from '../../src/app/read-api/coverage-reads.js';
import { createReadApi, matchReadPath } from '../../src/app/read-api/read-routes.js';
import { READ_STATEMENT_TIMEOUT_MS, readAlone, readOnly } from '../../src/app/read-api/read-transaction.js';
import { oneRecordAnswer } from '../../src/app/read-api/record-answers.js';
import { openDatabase } from '../../src/db/connect.js';
import { type Executor, queryRows } from '../../src/db/rows.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import { silentLogger } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let testDb: TestDatabase;

before(async () => {
  testDb = await createTestDatabase();
});

after(async () => {
  await testDb?.drop();
});

/** What the statement saw: whether it ran alone (its transaction began with it), read-only, its timeout. */
async function seen(db: Executor) {
  const [row] = await queryRows<{ alone: boolean; read_only: string; timeout: string }>(
    db,
    sql`SELECT transaction_timestamp() = statement_timestamp() AS alone,
               current_setting('transaction_read_only') AS read_only,
               current_setting('statement_timeout') AS timeout`,
  );
  return row!;
}

describe('the read API pool', () => {
  it('sends a lone statement alone, read-only and timed out by its session', async () => {
    const pool = testDb.database.bounded(READ_API_DATABASE);
    try {
      assert.equal(pool.readOnlySessions, true);
      assert.deepEqual(await readAlone(pool, seen), {
        alone: true,
        read_only: 'on',
        timeout: `${READ_STATEMENT_TIMEOUT_MS / 1000}s`,
      });
      // Several statements keep their transaction (one snapshot).
      assert.equal((await readOnly(pool, seen)).alone, false);
      await assert.rejects(
        readAlone(pool, (db) => db.execute(sql`CREATE TABLE read_api_may_not_write (x int)`)),
        /read-only/,
      );
      await assert.rejects(
        readAlone(pool, (db) => db.execute(sql`SELECT pg_sleep(${READ_STATEMENT_TIMEOUT_MS / 1000 + 2})`)),
        /statement timeout|cancel/i,
      );
    } finally {
      await pool.close();
    }
  });

  it('sends a look-up and a list by key alone, and reads a list by page number in one snapshot', () => {
    const alone = (path: string, query: string) =>
      matchReadPath(path, new URLSearchParams(query))?.alone === true;
    assert.equal(alone('/tx/0xab', ''), true);
    assert.equal(alone('/mintedTxByChainTxHash/0xab', ''), true);
    assert.equal(alone('/txs', 'cursor=5&order=asc&count=100'), true);
    assert.equal(alone('/txsByAccount/0xab', 'count=10'), true);
    assert.equal(alone('/txs', 'page=2'), false);
    assert.equal(alone('/txs/0xab', ''), false);
    assert.equal(alone('/balances/0xab', ''), false);
  });

  it('reads the coverage of look-ups once for many answers at a time, on its read-only sessions', async () => {
    await migrateDatabase(testDb.database);
    const pool = testDb.database.bounded(READ_API_DATABASE);
    // Look-ups read their record as a prepared statement: every `execute` is a coverage read.
    let executed = 0;
    const db = new Proxy(pool.db, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'execute') return value;
        return (...args: unknown[]) => {
          executed++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    try {
      const api = createReadApi({ database: { ...pool, db }, logger: silentLogger(), token: undefined });
      const lookUp = () =>
        api({
          method: 'GET',
          path: `/tx/0x${'ab'.repeat(32)}`,
          params: new URLSearchParams(),
          authorization: undefined,
        });
      const replies = await Promise.all(Array.from({ length: 20 }, lookUp));
      assert.ok(
        replies.every((r) => r?.status === 503),
        'the mirror is not backfilled: each says so',
      );
      assert.equal(executed, 1, 'one coverage read for twenty look-ups at once');
      await new Promise((resolve) => setTimeout(resolve, COVERAGE_REUSE_MS + 10));
      await lookUp();
      assert.equal(executed, 2, 'read again once older than its reuse');
    } finally {
      await pool.close();
    }
  });

  it('is the process pool itself on the embedded database, read in a transaction every time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'read-api-sessions-'));
    const embedded = await openDatabase({ dataDir: dir });
    try {
      const pool = embedded.bounded(READ_API_DATABASE);
      assert.equal(pool.readOnlySessions, false);
      const row = await readAlone(pool, seen);
      assert.deepEqual([row.alone, row.read_only], [false, 'on']);
      // The look-up's one statement reads there too: a mirror not backfilled says so.
      await migrateDatabase(embedded);
      const lookUp = await readAlone(pool, (db) =>
        oneRecordAnswer(db, { by: 'ledgerHash', hash: `0x${'ab'.repeat(32)}`, now: new Date() }),
      );
      assert.deepEqual([lookUp.status, lookUp.body], [503, '{"error":"err_mirror_not_backfilled"}']);
      // The handle still writes outside the read API.
      await embedded.db.execute(sql`CREATE TABLE written (x int)`);
    } finally {
      await embedded.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
