import type { Config } from '../../config.js';
import type { SyncStatus } from '../../db/status.js';
import type { StreamStatus } from '../../db/stream-queries.js';
import { defineCommand } from '../define-command.js';
import { formatTable } from '../format.js';

const usage = `Usage: ledger-indexer status [--json]

Shows, per stream: the watermark, the walk in progress (backfill progress), the lag to the
service head (one request to page 1 per stream when LEDGER_BASE_URL is set), the last success,
the error streak, the rejected records and the conflicts (records served again with immutable
fields different from the stored ones); then the records stored and the non-final backlog.

With REDIS_URL set it adds the depth of each queue; when Redis refuses the credentials or stays
unreachable after a few attempts, the report is still printed, then one line says why and the
exit code is 1.

Options:
  --base-url URL  the ledger service, for the lag (default: $LEDGER_BASE_URL)
  --json          one JSON document instead of the table`;

/** One stream as `status --json` prints it. */
export interface StreamReport {
  key: string;
  spec: StreamStatus['spec'];
  watermark: number | null;
  walk: StreamStatus['walk'];
  /** Pages walked of the largest `totalPages` seen, for a walk in progress. */
  backfill: { pagesDone: number; totalPages: number } | null;
  /** The newest rawId of the stream at the service, `null` when not asked or unreachable. */
  headRawId: number | null;
  /** `headRawId - watermark`: how far behind the stream is, in rawIds. */
  lagRawIds: number | null;
  headError: string | null;
  leaseOwner: string | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  errorStreak: number;
  /** Records of the stream waiting for a re-read (not final yet). */
  nonFinal: number;
  rejected: number;
  /** Records of the stream served again with immutable fields different from the stored ones. */
  conflicts: number;
}

export const command = defineCommand({
  name: 'status',
  usage,
  flags: { json: { type: 'boolean' }, 'base-url': { type: 'string' } },
  async run({ values, io, config: loadConfig, logger: createLogger, onClose }) {
    const config = loadConfig({ ledgerBaseUrl: values['base-url'] });
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const { openDatabase } = await import('../../db/connect.js');
    const { readMigrationState } = await import('../../db/migrate.js');
    const { readSyncStatus } = await import('../../db/status.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
    onClose(() => database.close());
    // Looking never changes the schema: a database behind the code is reported, not migrated.
    const migrations = await readMigrationState(database);
    if (migrations.applied < migrations.expected) {
      io.stderr.write(
        `ledger-indexer status: the database is not migrated (${migrations.applied} of ${migrations.expected} migrations applied); run 'ledger-indexer migrate' or 'sync' first\n`,
      );
      return 1;
    }
    const status = await readSyncStatus(database.db);
    const heads = config.ledgerBaseUrl === undefined ? null : await readHeads(config, status, io.signal);
    io.signal.throwIfAborted();
    const streams = status.streams.map((stream) => streamReport(stream, heads?.get(stream.key)));
    const { readQueueStatus, formatQueueStatus } = await import('../../queue/queue-status.js');
    const queues =
      config.redisUrl === undefined
        ? null
        : await readQueueStatus(config.redisUrl, { logger, signal: io.signal });
    if (values.json) {
      const { streams: _omit, ...totals } = status;
      io.stdout.write(
        `${JSON.stringify({ streams, ...totals, queues, database: database.describe() }, null, 2)}\n`,
      );
    } else {
      const queueLines = queues === null ? [] : formatQueueStatus(queues);
      io.stdout.write(`${[renderTable(streams, status, database.describe()), ...queueLines].join('\n')}\n`);
    }
    // The database state is shown; the queues' failure still fails the command, in one line.
    if (queues !== null && 'error' in queues) {
      io.stderr.write(`ledger-indexer status: ${queues.error}\n`);
      return 1;
    }
    return 0;
  },
});

type Head = { rawId: number | null; error: string | null };

/** Page 1 of each stream, fetched once: its newest rawId is the service's head for that stream. */
async function readHeads(
  config: Config,
  status: SyncStatus,
  signal: AbortSignal,
): Promise<Map<string, Head>> {
  const { createLedgerClient } = await import('../../client/ledger-client.js');
  const { clientOptionsFromConfig } = await import('../../client/options.js');
  const { createFetchPage } = await import('../../app/sync-adapters.js');
  const client = createLedgerClient({ ...clientOptionsFromConfig(config), retries: 1 });
  const fetchPage = createFetchPage(client, signal);
  const heads = new Map<string, Head>();
  try {
    await Promise.all(
      status.streams.map(async (stream) => {
        try {
          const page = await fetchPage(stream.spec, 1);
          const ids = page.txs.map((tx) => tx.rawId);
          heads.set(stream.key, { rawId: ids.length > 0 ? Math.max(...ids) : null, error: null });
        } catch (error) {
          heads.set(stream.key, {
            rawId: null,
            error: error instanceof Error ? error.message : String(error),
          });
        }
      }),
    );
  } finally {
    await client.close();
  }
  return heads;
}

function streamReport(stream: SyncStatus['streams'][number], head: Head | undefined): StreamReport {
  const walk = stream.walk;
  const lag =
    head?.rawId === null || head?.rawId === undefined
      ? null
      : Math.max(head.rawId - Math.max(stream.watermark ?? 0, 0), 0);
  return {
    key: stream.key,
    spec: stream.spec,
    watermark: stream.watermark,
    walk,
    backfill: walk ? { pagesDone: walk.nextPage - 1, totalPages: walk.totalPages } : null,
    headRawId: head?.rawId ?? null,
    lagRawIds: lag,
    headError: head?.error ?? null,
    leaseOwner: stream.leaseOwner,
    lastSuccessAt: stream.lastSuccessAt?.toISOString() ?? null,
    lastError: stream.lastError,
    errorStreak: stream.errorStreak,
    nonFinal: stream.nonFinal,
    rejected: stream.rejected,
    conflicts: stream.conflicts,
  };
}

function renderTable(streams: StreamReport[], status: SyncStatus, database: string): string {
  const lines: string[] = [`database: ${database}`];
  if (streams.length === 0) {
    lines.push('no stream synced yet (run `ledger-indexer sync`)');
  } else {
    const rows = [
      ['STREAM', 'WATERMARK', 'WALK', 'LAG', 'LAST SUCCESS', 'ERRORS', 'NON-FINAL', 'REJECTED', 'CONFLICTS'],
      ...streams.map((s) => [
        s.key,
        s.watermark === null ? '-' : String(s.watermark),
        s.walk ? `${s.walk.mode} ${s.walk.nextPage - 1}/${s.walk.totalPages} pages` : 'idle',
        s.lagRawIds !== null ? String(s.lagRawIds) : s.headError ? 'unreachable' : '-',
        s.lastSuccessAt ?? 'never',
        String(s.errorStreak),
        String(s.nonFinal),
        String(s.rejected),
        String(s.conflicts),
      ]),
    ];
    lines.push(formatTable(rows, [false, true, false, true, false, true, true, true, true]));
    for (const s of streams)
      if (s.lastError && s.errorStreak > 0) lines.push(`${s.key}: last error: ${s.lastError}`);
  }
  lines.push(
    `records stored: ${status.records} (newest rawId ${status.newestRawId ?? '-'})`,
    `non-final: ${status.nonFinal.queued} waiting for a re-read (${status.nonFinal.due} due now), ` +
      `${status.nonFinal.notPackaged} not packaged`,
    `rejected records: ${status.rejected}`,
    `conflicts: ${status.conflicts}${status.conflicts > 0 ? ' (records served with immutable fields different from the stored ones; stored kept, see ledger_tx_conflicts and `verify`)' : ''}`,
  );
  return lines.join('\n');
}
