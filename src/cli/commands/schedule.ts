import { settlesWithin, untilAborted } from '../../abort.js';
import { ENV, parseAccounts } from '../../config.js';
import { DatabaseError, UsageError } from '../../errors.js';
import { commandFailure, defineCommand } from '../define-command.js';
import { requireRedis } from './worker.js';

const usage = `Usage: ledger-indexer schedule [options]

Registers the periodic jobs: one sync per stream, the re-read of non-final records, and the
token and fee refresh. They are kept in PostgreSQL (sync_schedules), then registered in Redis
as BullMQ job schedulers; workers register them again at start and whenever Redis comes back
without its data. Idempotent: running it again updates the same schedules and never adds a
second one.

Options:
  --every DURATION        period of each stream's sync: 30s, 5m, 1h or milliseconds, 1s to 168h
                          (default 30s)
  --account ID            keep this account's list in sync; repeat for several (default: the global list)
  --global                also the global list when accounts are given
  --queue-prefix P        Redis key prefix of the queues (default ledger-indexer)

Needs ${ENV.redisUrl} and the database (${ENV.databaseUrl}). Exit codes: 0 registered; 1 Redis
refused the credentials or stayed unreachable, or the database failed (one line); 2 bad flags or
settings; 130/143 SIGINT/SIGTERM.`;

export const command = defineCommand({
  name: 'schedule',
  usage,
  flags: {
    every: { type: 'string' },
    account: { type: 'string', multiple: true },
    global: { type: 'boolean' },
    'queue-prefix': { type: 'string' },
  },
  async run({ values, io, config: loadConfig, logger: createLogger, onClose }) {
    const everyMs = parseDuration(values.every ?? '30s');
    const accounts = parseAccounts(values.account, '--account');
    const config = requireRedis(loadConfig());
    const streams = [
      ...(accounts.length === 0 || values.global ? [{}] : []),
      ...accounts.map((account) => ({ account })),
    ];
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const { openDatabase } = await import('../../db/connect.js');
    const { migrateDatabase } = await import('../../db/schema/migrate-database.js');
    const { saveSchedules } = await import('../../db/stores/wanted-schedules.js');
    const { COMMAND_CONNECT_ATTEMPTS, openRedis } = await import('../../queue/connection.js');
    const { createLedgerQueues } = await import('../../queue/queues.js');
    const { applySchedules, wantedSchedules } = await import('../../queue/schedules.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    onClose(() => database.close());
    const redis = openRedis(config.redisUrl, 'producer', {
      logger,
      connectAttempts: COMMAND_CONNECT_ATTEMPTS,
    });
    onClose(() => redis.connection.disconnect());
    const wanted = wantedSchedules({ everyMs, streams });
    // PostgreSQL first: what is wanted survives a Redis that loses its data.
    await migrateDatabase(database);
    await redis.ready(io.signal);
    const queues = createLedgerQueues({
      connection: redis.connection,
      prefix: values['queue-prefix'],
      onError: redis.report,
    });
    onClose(() => settlesWithin(queues.close(), 1000));
    await saveSchedules(database.db, { prefix: queues.prefix, schedules: wanted, now: new Date() });
    const ids = await untilAborted(applySchedules(queues, wanted), io.signal);
    io.stdout.write(`${ids.length} schedules registered (every ${everyMs} ms): ${ids.join(', ')}\n`);
    return 0;
  },
  async fail(error, { io, config }) {
    if (io.signal.aborted || error instanceof DatabaseError) return commandFailure('schedule', error, io);
    const { redisFailureLine } = await import('../../queue/redis-failures.js');
    io.stderr.write(`ledger-indexer schedule: ${redisFailureLine(error, requireRedis(config()).redisUrl)}\n`);
    return 1;
  },
});

/** Longest `--every`: a week. */
const MAX_EVERY_MS = 7 * 24 * 3_600_000;

/** `30s`, `5m`, `1h`, `250ms` or a bare number of milliseconds, from 1s to a week. */
export function parseDuration(text: string): number {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`--every must be a duration like 30s, 5m or 1h (got '${text}')`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(match[1]) * factor;
  if (ms < 1000) throw new UsageError(`--every must be at least 1s (got '${text}')`);
  if (ms > MAX_EVERY_MS) throw new UsageError(`--every must be at most 168h, a week (got '${text}')`);
  return ms;
}
