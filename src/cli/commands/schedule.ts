import { ENV, loadConfig } from '../../config.js';
import { ConfigError, UsageError } from '../../errors.js';
import type { Command } from '../command.js';
import { parseFlags } from '../command.js';
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

Needs ${ENV.redisUrl} and the database (${ENV.databaseUrl}).`;

export const command: Command = {
  summary: 'register the periodic sync jobs (idempotent)',
  usage,
  async run(argv, io) {
    const { values } = parseFlags(argv, {
      every: { type: 'string' },
      account: { type: 'string', multiple: true },
      global: { type: 'boolean' },
      'queue-prefix': { type: 'string' },
    });
    const everyMs = parseDuration(values.every ?? '30s');
    const accounts = values.account ?? [];
    if (accounts.some((a) => a.trim() === '')) throw new ConfigError('--account', 'must not be empty');
    const config = requireRedis(loadConfig(io.env));
    const streams = [
      ...(accounts.length === 0 || values.global ? [{}] : []),
      ...accounts.map((account) => ({ account })),
    ];
    const { openDatabase } = await import('../../db/connect.js');
    const { migrateDatabase } = await import('../../db/migrate.js');
    const { saveSchedules } = await import('../../db/schedules.js');
    const { createRedisConnection } = await import('../../queue/connection.js');
    const { createLedgerQueues } = await import('../../queue/queues.js');
    const { applySchedules, wantedSchedules } = await import('../../queue/schedules.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const connection = createRedisConnection(config.redisUrl, 'producer');
    const queues = createLedgerQueues({ connection, prefix: values['queue-prefix'] });
    try {
      const wanted = wantedSchedules({ everyMs, streams });
      // PostgreSQL first: what is wanted survives a Redis that loses its data.
      await migrateDatabase(database);
      await saveSchedules(database.db, { prefix: queues.prefix, schedules: wanted, now: new Date() });
      const ids = await applySchedules(queues, wanted);
      io.stdout.write(`${ids.length} schedules registered (every ${everyMs} ms): ${ids.join(', ')}\n`);
      return 0;
    } catch (error) {
      io.stderr.write(`ledger-indexer schedule: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    } finally {
      await queues.close();
      connection.disconnect();
      await database.close();
    }
  },
};

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
