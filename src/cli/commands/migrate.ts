import { openDatabase } from '../../db/connect.js';
import { createDeferredIndexes } from '../../db/schema/deferred-indexes.js';
import { migrateDatabase } from '../../db/schema/migrate-database.js';
import { DatabaseError } from '../../errors.js';
import { defineCommand } from '../define-command.js';

const usage = `Usage: ledger-indexer migrate

Applies the database migrations that are not applied yet, and builds the read-side indexes a
first backfill deferred if one was stopped before its end, then exits. Safe to run from several
processes at once (they take turns on a PostgreSQL advisory lock).

Environment:
  DATABASE_URL             PostgreSQL connection string; absent: the embedded database in
                           LEDGER_INDEXER_DATA_DIR (default ./.ledger-indexer)
  LOG_LEVEL                default info
`;

export const command = defineCommand({
  name: 'migrate',
  usage,
  flags: {},
  async run({ io, config, logger, onClose }) {
    const { databaseUrl, dataDir } = config();
    const database = await openDatabase({ databaseUrl, dataDir, logger: logger() });
    onClose(() => database.close().catch(() => undefined));
    const target = database.describe();
    try {
      const started = Date.now();
      await migrateDatabase(database);
      logger().debug({ duration_ms: Date.now() - started }, 'migrations applied');
      const built = await createDeferredIndexes({ database, logger: logger() }).restore();
      io.stdout.write(`migrated ${target}\n`);
      if (built.length > 0) io.stdout.write(`built ${built.length} deferred indexes: ${built.join(', ')}\n`);
      return 0;
    } catch (error) {
      io.stderr.write(`ledger-indexer migrate: cannot migrate ${target}: ${describeError(error)}\n`);
      return 1;
    }
  },
});

function describeError(error: unknown): string {
  if (error instanceof DatabaseError) return error.message;
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0]);
  if (error instanceof Error) return error.message.split('\n')[0] || error.name;
  return String(error);
}
