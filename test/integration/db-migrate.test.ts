import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openDatabase } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import { packageRoot } from '../../src/paths.js';
import { adminUrl, dropDatabase, urlFor } from '../helpers/database.js';

const EXPECTED_TABLES = [
  'ledger_bundle_items',
  'ledger_tokens',
  'ledger_transactions',
  'ledger_tx_status_history',
  'rejected_records',
  'sync_runs',
  'sync_streams',
];

/** Runs `ledger-indexer migrate` in a child process; resolves to its exit code and output. */
function runMigrate(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'migrate'], {
      cwd: packageRoot,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('migrations', () => {
  const name = `ledger_migrate_${process.pid}_${randomBytes(4).toString('hex')}`;
  const url = urlFor(name);

  before(async () => {
    const admin = new pg.Client({ connectionString: adminUrl() });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
    } finally {
      await admin.end();
    }
  });
  after(async () => {
    await dropDatabase(name);
  });

  it('apply on an empty database from several processes and connections at once, then again', async () => {
    const databases = await Promise.all(
      [1, 2, 3].map(() => openDatabase({ databaseUrl: url, maxConnections: 2 })),
    );
    try {
      const [children] = await Promise.all([
        Promise.all([1, 2, 3].map(() => runMigrate({ DATABASE_URL: url }))),
        Promise.all(databases.map((database) => migrateDatabase(database))),
      ]);
      for (const child of children) {
        assert.equal(child.code, 0, child.stderr);
        assert.match(child.stdout, /^migrated postgres:\/\/.*\n$/);
      }
      await migrateDatabase(databases[0]!);
      const second = await runMigrate({ DATABASE_URL: url });
      assert.equal(second.code, 0, second.stderr);

      const db = databases[0]!.db;
      const tables = await queryRows<{ name: string }>(
        db,
        sql`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
      );
      for (const table of EXPECTED_TABLES)
        assert.ok(
          tables.some((t) => t.name === table),
          `${table} exists`,
        );
      const applied = await queryRows<{ n: number }>(
        db,
        sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`,
      );
      const journal = JSON.parse(
        readFileSync(new URL('../../migrations/meta/_journal.json', import.meta.url), 'utf8'),
      );
      assert.ok(journal.entries.length >= 2);
      assert.equal(applied[0]?.n, journal.entries.length, 'each migration is recorded once');
    } finally {
      await Promise.all(databases.map((database) => database.close()));
    }
  });

  it('the command names a bad DATABASE_URL (exit 2) and an unreachable server (exit 1) in one line', async () => {
    const bad = await runMigrate({ DATABASE_URL: 'mysql://127.0.0.1/x' });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^ledger-indexer migrate: DATABASE_URL: .*\n$/);

    const server = await new Promise<import('node:net').Server>((resolve) => {
      import('node:net').then(({ createServer }) => {
        const s = createServer();
        s.listen(0, '127.0.0.1', () => resolve(s));
      });
    });
    const port = (server.address() as import('node:net').AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const unreachable = await runMigrate({ DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${port}/x` });
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      /^ledger-indexer migrate: cannot migrate postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/x: .*ECONNREFUSED.*\n$/,
    );
    assert.doesNotMatch(unreachable.stderr, /hunter2/);
  });
});
