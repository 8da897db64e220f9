import { spawnSync } from 'node:child_process';
import { createScenarioDatabase, type ScenarioDatabase } from './databases.js';
import type { IndexerSetup } from './indexer-sync.js';
import { lastLine } from './indexer-sync.js';
import type { BenchOptions } from './options.js';

/** What every scenario is handed. */
export interface BenchContext {
  options: BenchOptions;
  setup: IndexerSetup;
  /** Connection string of the server's admin database (`DATABASE_URL`). */
  admin: string;
  /** A folder for ground-truth dumps and COPY text, removed at the end. */
  tmpDir: string;
  log(message: string): void;
}

/** A fresh database for `scenario`; with `migrate`, the schema applied by `ledger-indexer migrate`. */
export async function freshDatabase(
  context: BenchContext,
  scenario: string,
  options: { migrate?: boolean } = {},
): Promise<ScenarioDatabase> {
  const database = await createScenarioDatabase(context.admin, scenario);
  if (options.migrate) {
    const { runner, root, env } = context.setup;
    if (!runner.hasCommand('migrate')) {
      await database.drop();
      throw new Error('the migrate command has not landed');
    }
    const result = spawnSync(process.execPath, runner.nodeArgs(['migrate']), {
      cwd: root,
      env: { ...env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (result.status !== 0) {
      await database.drop();
      throw new Error(`migrate failed: ${lastLine(result.stderr ?? '')}`);
    }
  }
  return database;
}

/** Runs `fn` and always drops the database afterwards. */
export async function usingDatabase<T>(
  database: ScenarioDatabase,
  fn: (database: ScenarioDatabase) => Promise<T>,
): Promise<T> {
  try {
    return await fn(database);
  } finally {
    await database.drop().catch(() => undefined);
  }
}
