import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { adminUrl, dropDatabase, urlFor } from '../helpers/database.js';
import { runCli } from './sync-cli-run.js';

describe('status on a database that was never migrated', () => {
  const name = `ledger_test_status_${process.pid}_${randomBytes(4).toString('hex')}`;

  before(async () => {
    const admin = new pg.Client({ connectionString: adminUrl() });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
    } finally {
      await admin.end();
    }
  });
  after(() => dropDatabase(name));

  it('says it is not migrated in one line, exits 1, and leaves the schema untouched', async () => {
    const run = runCli(['status'], { DATABASE_URL: urlFor(name) });
    const { code, stderr } = await run.done;
    assert.equal(code, 1, stderr);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(
      lines[0] ?? '',
      /^ledger-indexer status: the database is not migrated \(0 of \d+ migrations applied\)/,
    );

    const client = new pg.Client({ connectionString: urlFor(name) });
    await client.connect();
    try {
      const { rows } = await client.query<{ tables: string }>(
        `SELECT count(*)::text AS tables FROM pg_tables WHERE schemaname IN ('public', 'drizzle')`,
      );
      assert.equal(rows[0]?.tables, '0', 'status created no table');
    } finally {
      await client.end();
    }
  });
});
