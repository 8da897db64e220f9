import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { migrate as migrateWithDrizzle } from 'drizzle-orm/node-postgres/migrator';
import { migrationsFolder as defaultMigrationsFolder } from '../../paths.js';
import type { Database } from '../connect.js';
import { databaseOperation } from '../database-errors.js';
import { queryRows } from '../rows.js';
import { createDeferredIndexes } from './deferred-indexes.js';

/** Advisory-lock key held while migrating (any constant unique to this app). */
const MIGRATION_LOCK_KEY = 7_311_905_012;

/**
 * Applies the pending migrations of `migrations/`. Safe when several processes start at once:
 * each takes a PostgreSQL advisory lock on one dedicated connection around Drizzle's migrator,
 * so one migrates and the others then find nothing left to do.
 */
export async function migrateDatabase(
  database: Database,
  options: { migrationsFolder?: string } = {},
): Promise<void> {
  const folder = options.migrationsFolder ?? defaultMigrationsFolder;
  // Before the lock: the builds take connections of their own (a pool of one would wait on it).
  await restoreBeforeMigrating(database, folder);
  await databaseOperation('migrate', () => migrateLocked(database, folder));
}

async function migrateLocked(database: Database, folder: string): Promise<void> {
  await database.withConnection(async (db) => {
    await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      // Both drivers' migrators are the same dialect code; the node-postgres one types the session loosely enough for both.
      await migrateWithDrizzle(db as Parameters<typeof migrateWithDrizzle>[0], { migrationsFolder: folder });
    } finally {
      await db.execute(sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  });
}

/**
 * A pending migration may alter or drop an index that a first backfill deferred (see
 * `deferred-indexes.ts`): those are built again before any migration runs.
 */
async function restoreBeforeMigrating(database: Database, folder: string): Promise<void> {
  const state = await readMigrationState(database, { migrationsFolder: folder });
  if (state.applied === 0 || state.applied >= state.expected) return;
  const [table] = await queryRows<{ found: boolean }>(
    database.db,
    sql`SELECT to_regclass('deferred_indexes') IS NOT NULL AS found`,
  );
  if (table?.found) await createDeferredIndexes({ database }).restore();
}

/** How many of the migrations of `migrations/` the database has applied. */
export interface MigrationState {
  applied: number;
  expected: number;
}

/**
 * Reads which migrations are applied without applying any: for commands that only look, such as
 * `status`, which must never change the schema of a database it was pointed at.
 */
export async function readMigrationState(
  database: Database,
  options: { migrationsFolder?: string } = {},
): Promise<MigrationState> {
  const folder = options.migrationsFolder ?? defaultMigrationsFolder;
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return databaseOperation('migration-state', async () => {
    // Two statements: the count cannot even be planned while the table does not exist.
    const [table] = await queryRows<{ found: boolean }>(
      database.db,
      sql`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS found`,
    );
    if (!table?.found) return { applied: 0, expected: journal.entries.length };
    const rows = await queryRows<{ applied: string }>(
      database.db,
      sql`SELECT count(*)::text AS applied FROM drizzle.__drizzle_migrations`,
    );
    return { applied: Number(rows[0]?.applied ?? 0), expected: journal.entries.length };
  });
}
