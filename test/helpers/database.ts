// Each integration test file gets its own PostgreSQL database: a clone of a migrated template
// that is built once per version of the migrations and shared by every test process.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import { migrationsFolder } from '../../src/paths.js';

const TEMPLATE_LOCK_KEY = 7_311_905_013;

export interface TestDatabase {
  /** Connection string of this file's own database. */
  url: string;
  database: Database;
  /** Closes the connections and drops the database. */
  drop(): Promise<void>;
}

/** The server's admin connection string: `DATABASE_URL`, else the local default. */
export function adminUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** `url` with its database name replaced. */
export function urlFor(name: string, base: string = adminUrl()): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates an empty, migrated database of its own for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = `ledger_tpl_${migrationsHash()}`;
  const name = `ledger_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      await ensureTemplate(admin, template);
      await admin.query(`CREATE DATABASE ${ident(name)} TEMPLATE ${ident(template)}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  } finally {
    await admin.end();
  }
  const url = urlFor(name);
  const database = await openDatabase({ databaseUrl: url, maxConnections: 8 });
  return {
    url,
    database,
    async drop() {
      await database.close();
      await dropDatabase(name);
    },
  };
}

/** Drops a database, closing whatever is still connected to it. */
export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

async function ensureTemplate(admin: pg.Client, template: string): Promise<void> {
  const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
  if (found.rowCount) return;
  // Built under another name and renamed when complete, so a half-built template is never cloned.
  const building = `${template}_building`;
  await admin.query(`DROP DATABASE IF EXISTS ${ident(building)} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${ident(building)}`);
  const database = await openDatabase({ databaseUrl: urlFor(building), maxConnections: 1 });
  try {
    await migrateDatabase(database);
  } finally {
    await database.close();
  }
  await admin.query(`ALTER DATABASE ${ident(building)} RENAME TO ${ident(template)}`);
  // Templates of older migrations are no longer cloned by anyone holding this lock.
  const stale = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'ledger\\_tpl\\_%' AND datname NOT LIKE '%\\_building' AND datname <> $1`,
    [template],
  );
  for (const row of stale.rows)
    await admin.query(`DROP DATABASE IF EXISTS ${ident(row.datname)} WITH (FORCE)`);
}

/** A short hash of every file of the migrations folder: a changed migration means a new template. */
function migrationsHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(relative(migrationsFolder, path)).update('\0').update(readFileSync(path)).update('\0');
    }
  };
  walk(migrationsFolder);
  return hash.digest('hex').slice(0, 16);
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export { makeHashedLedgerTx, makeLedgerTx } from './ledger-tx.js';
