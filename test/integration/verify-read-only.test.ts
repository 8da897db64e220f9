/**
 * `verify` on a mirror that refuses writes (a role granted SELECT alone, a database with
 * `default_transaction_read_only`, as on a hot standby): with a current schema it verifies and
 * only skips its own bookkeeping with a warning; with a schema behind it says so in one line.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { adminUrl, createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const role = `ledger_ro_${process.pid}_${randomBytes(3).toString('hex')}`;

async function admin<T>(work: (client: pg.Client) => Promise<T>, url = adminUrl()): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

describe('verify on a mirror that refuses writes', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;
  let dbName: string;

  const verifyRuns = async () =>
    Number(
      (await queryRows<{ n: string }>(db.database.db, sql`SELECT count(*)::text AS n FROM verify_runs`))[0]
        ?.n,
    );

  before(async () => {
    db = await createTestDatabase();
    dbName = new URL(db.url).pathname.slice(1);
    sim = createSimulator({ records: 120, seed: 61, arrivalsPerSecond: 0 });
    const { url } = await sim.listen();
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent' };
    assert.equal((await runMain(['sync'], env)).code, 0);
    await admin(async (client) => {
      await client.query(`CREATE ROLE "${role}" LOGIN`);
      await client.query(`GRANT CONNECT ON DATABASE "${dbName}" TO "${role}"`);
    });
    await admin(async (client) => {
      for (const schema of ['public', 'drizzle']) {
        await client.query(`GRANT USAGE ON SCHEMA ${schema} TO "${role}"`);
        await client.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO "${role}"`);
      }
    }, db.url);
  });

  after(async () => {
    await sim.close();
    await db.drop();
    await admin((client) => client.query(`DROP ROLE IF EXISTS "${role}"`));
  });

  const asRole = () => {
    const url = new URL(db.url);
    url.username = role;
    return { ...env, DATABASE_URL: url.toString() };
  };

  it('a role granted SELECT alone: verified complete, the verify_runs row skipped with a warning', async () => {
    const runs = await verifyRuns();
    const result = await runMain(['verify'], asRole());
    assert.equal(result.code, 0, result.err + result.out);
    assert.match(result.out, /^txs: complete$/m);
    assert.match(
      result.err,
      /^ledger-indexer verify: warning: storing this report in verify_runs skipped: permission denied \(SQLSTATE 42501/m,
    );
    assert.equal(await verifyRuns(), runs, 'nothing written');
  });

  it('a role granted SELECT alone on a schema behind: one line saying so, exit 1', async () => {
    const [last] = await queryRows<{ id: number; hash: string; created_at: string }>(
      db.database.db,
      sql`DELETE FROM drizzle.__drizzle_migrations
          WHERE id = (SELECT max(id) FROM drizzle.__drizzle_migrations) RETURNING id, hash, created_at::text`,
    );
    try {
      const result = await runMain(['verify'], asRole());
      assert.equal(result.code, 1, result.err + result.out);
      const lines = result.err.trim().split('\n');
      assert.equal(lines.length, 1, result.err);
      assert.match(
        lines[0]!,
        /^ledger-indexer verify: this mirror's schema is behind \((\d+) of (\d+) migrations applied\) and the database refuses writes \(permission denied/,
      );
    } finally {
      await db.database.db.execute(
        sql`INSERT INTO drizzle.__drizzle_migrations (id, hash, created_at)
            VALUES (${last!.id}, ${last!.hash}, ${last!.created_at}::bigint)`,
      );
    }
  });

  it('a database with default_transaction_read_only (a standby): verified complete, nothing written', async () => {
    const runs = await verifyRuns();
    await admin((client) =>
      client.query(`ALTER DATABASE "${dbName}" SET default_transaction_read_only = on`),
    );
    try {
      const result = await runMain(['verify'], env);
      assert.equal(result.code, 0, result.err + result.out);
      assert.match(result.out, /^txs: complete$/m);
      assert.match(
        result.err,
        /^ledger-indexer verify: warning: storing this report in verify_runs skipped: database is read-only \(SQLSTATE 25006/m,
      );
    } finally {
      await admin((client) => client.query(`ALTER DATABASE "${dbName}" RESET default_transaction_read_only`));
    }
    assert.equal(await verifyRuns(), runs);
    // Writable again: the report is stored as before.
    assert.equal((await runMain(['verify'], env)).code, 0);
    assert.equal(await verifyRuns(), runs + 1);
  });
});
