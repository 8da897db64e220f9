import { sql } from 'drizzle-orm';
import { migrate as migrateWithDrizzle } from 'drizzle-orm/node-postgres/migrator';
import { migrationsFolder as defaultMigrationsFolder } from '../paths.js';
import type { Database } from './connect.js';
import { databaseOperation } from './database-errors.js';

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
