import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openDatabase } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import { packageRoot } from '../../src/paths.js';
import { COMMAND_ENTRY } from '../helpers/command-entry.js';
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
    const child = spawn(process.execPath, [...COMMAND_ENTRY, 'migrate'], {
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

  it('count the status changes of records stored before the count existed from their history', async () => {
    // The migrations up to the one adding `status_changes`, then records and histories written
    // by that schema, then the rest.
    const before = mkdtempSync(join(tmpdir(), 'ledger-migrations-'));
    const upgraded = `${name}_up`;
    const admin = new pg.Client({ connectionString: adminUrl() });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${upgraded}"`);
    await admin.end();
    const database = await openDatabase({ databaseUrl: urlFor(upgraded), maxConnections: 2 });
    try {
      const folder = join(packageRoot, 'migrations');
      cpSync(folder, before, { recursive: true });
      const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8'));
      const adding = journal.entries.findIndex((e: { tag: string }) => e.tag.endsWith('_status_changes'));
      assert.ok(adding > 0, 'the migration adding status_changes');
      journal.entries = journal.entries.slice(0, adding);
      writeFileSync(join(before, 'meta/_journal.json'), JSON.stringify(journal));
      await migrateDatabase(database, { migrationsFolder: before });
      await database.db.execute(sql`
        INSERT INTO ledger_transactions (raw_id, record_id, token_symbol, action, from_account, to_account,
          amount, fee, fee_recipient, nonce, token_id, chain_type, chain_id, data, version, sig, ledger_hash,
          status, internal_status, timestamp_ms, target_chain_tx_hash, express_chain_tx_hash,
          express_withdraw_fee, express_refund_ledger_hash, express_err, token_tag, first_seen_at, updated_at)
        SELECT n, '', 'AR', 'transfer', 'a', 'b', 1, 0, 'f', n, 't', 'arweave', '0', '', 'v1', 's', 'h' || n,
          'packaged', '', 0, '', '', '', '', '', 'AR', now(), now()
        FROM generate_series(1, 3) AS n`);
      // rawId 1 never changed; 2 was pending at first sight and changed once; 3 changed twice.
      await database.db.execute(sql`
        INSERT INTO ledger_tx_status_history (raw_id, status, internal_status, observed_at)
        VALUES (2, 'confirmed', '', now()), (2, 'packaged', '', now()),
          (3, 'packaged', '', now()), (3, 'confirmed', '', now()), (3, 'packaged', '', now())`);
      await migrateDatabase(database);
      const rows = await queryRows<{ raw_id: number; status_changes: number }>(
        database.db,
        sql`SELECT raw_id::int, status_changes FROM ledger_transactions ORDER BY raw_id`,
      );
      assert.deepEqual(rows, [
        { raw_id: 1, status_changes: 0 },
        { raw_id: 2, status_changes: 1 },
        { raw_id: 3, status_changes: 2 },
      ]);
    } finally {
      await database.close();
      await dropDatabase(upgraded);
      rmSync(before, { recursive: true, force: true });
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
