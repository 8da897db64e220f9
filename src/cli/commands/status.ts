import { formatLastRun, formatListReading } from '../../app/status/list-reading.js';
import type { StreamReport } from '../../app/status/status-report.js';
import type { FeedStatus } from '../../db/queries/sink-status.js';
import type { SyncStatus } from '../../db/queries/sync-status.js';
import { isKeyCheckpoint } from '../../domain/checkpoints.js';
import { defineCommand } from '../define-command.js';
import { formatTable, shortenMiddle } from '../format.js';

/** The widest a stream's key is shown in the table (in full with `--json`). */
const STREAM_COLUMN_MAX = 100;

const usage = `Usage: ledger-indexer status [--json]

Shows, per stream: the watermark, the walk in progress (backfill progress), the dialect its
list is read in (READ BY: by key with the count asked a request, or by page), the pages its last
run committed (LAST RUN; by key, one a request answered), the lag to the service head (one
request to page 1 per stream when LEDGER_BASE_URL is set), the last success, the error streak,
the rejected records and the conflicts (records served again with immutable fields different
from the stored ones); then the records stored and the non-final backlog.

With REDIS_URL set it adds the depth of each queue; when Redis refuses the credentials or stays
unreachable after a few attempts, the report is still printed, then one line says why and the
exit code is 1.

Options:
  --base-url URL  the ledger service, for the lag (default: $LEDGER_BASE_URL)
  --json          one JSON document instead of the table`;

export const command = defineCommand({
  name: 'status',
  usage,
  flags: { json: { type: 'boolean' }, 'base-url': { type: 'string' } },
  async run({ values, io, config: loadConfig, logger: createLogger, onClose }) {
    const config = loadConfig({ ledgerBaseUrl: values['base-url'] });
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const { openDatabase } = await import('../../db/connect.js');
    const { notMigratedLine } = await import('../../app/status/stream-health.js');
    const { buildStatusReport, statusJson } = await import('../../app/status/status-report.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
    onClose(() => database.close());
    // Looking never changes the schema: a database behind the code is reported, not migrated.
    const behind = await notMigratedLine(database);
    if (behind !== null) {
      io.stderr.write(`ledger-indexer status: ${behind}\n`);
      return 1;
    }
    const report = await buildStatusReport({ config, database, logger, signal: io.signal });
    const { queues } = report;
    if (values.json) {
      io.stdout.write(`${JSON.stringify(statusJson(report), null, 2)}\n`);
    } else {
      const { formatQueueStatus } = await import('../../queue/queue-status.js');
      const queueLines = queues === null ? [] : formatQueueStatus(queues);
      io.stdout.write(
        `${[renderTable(report.streams, report.status, report.database), ...feedLines(report.feed), ...queueLines].join('\n')}\n`,
      );
    }
    // The database state is shown; the queues' failure still fails the command, in one line.
    if (queues !== null && 'error' in queues) {
      io.stderr.write(`ledger-indexer status: ${queues.error}\n`);
      return 1;
    }
    return 0;
  },
});

function renderTable(streams: StreamReport[], status: SyncStatus, database: string): string {
  const lines: string[] = [`database: ${database}`];
  if (streams.length === 0) {
    lines.push('no stream synced yet (run `ledger-indexer sync`)');
  } else {
    const rows = [
      [
        'STREAM',
        'WATERMARK',
        'WALK',
        'READ BY',
        'LAST RUN',
        'LAG',
        'LAST SUCCESS',
        'ERRORS',
        'NON-FINAL',
        'REJECTED',
        'CONFLICTS',
      ],
      ...streams.map((s) => [
        shortenMiddle(s.key, STREAM_COLUMN_MAX),
        s.watermark === null ? '-' : String(s.watermark),
        walkCell(s.walk),
        formatListReading(s.reading),
        formatLastRun(s.lastRun),
        s.lagRawIds !== null ? String(s.lagRawIds) : s.headError ? 'unreachable' : '-',
        s.lastSuccessAt ?? 'never',
        String(s.errorStreak),
        String(s.nonFinal),
        String(s.rejected),
        String(s.conflicts),
      ]),
    ];
    lines.push(formatTable(rows, [false, true, false, false, false, true, false, true, true, true, true]));
    for (const s of streams)
      if (s.lastError && s.errorStreak > 0)
        lines.push(`${shortenMiddle(s.key, STREAM_COLUMN_MAX)}: last error: ${s.lastError}`);
    if (status.deferredIndexes.length > 0)
      lines.push(
        `${status.deferredIndexes.length} read-side indexes deferred until the first backfill ends (\`ledger-indexer migrate\` builds them now)`,
      );
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

/** The change feed's head, and a line per sink. */
function feedLines(feed: FeedStatus): string[] {
  return [
    `feed head: position ${feed.head}`,
    ...feed.sinks.map((s) => {
      const lag =
        s.lagPositions > 0
          ? `${s.lagPositions} behind (oldest ${Math.round(s.lagSeconds)} s old)`
          : 'at the head';
      const error = s.lastError === null ? '' : `; last error: ${s.lastError}`;
      return `sink ${s.name} (${s.kind}): position ${s.position}, ${lag}, ${s.deliveredEvents} delivered, ${s.deadLetters} dead letters${error}`;
    }),
  ];
}

/** The WALK cell: a walk by page number's pages, a walk by key's rawId, or idle. */
function walkCell(walk: StreamReport['walk']): string {
  if (!walk) return 'idle';
  if (isKeyCheckpoint(walk)) return `${walk.mode} by key at ${walk.cursor}`;
  return `${walk.mode} ${walk.nextPage - 1}/${walk.totalPages} pages`;
}
