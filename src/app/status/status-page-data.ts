/** The status page's data: what `/status` reports, the streams' health, the last hour's writes, the last verify. */
import { readSyncStatus } from '../../db/queries/sync-status.js';
import { readRecordsPerMinute } from '../../db/queries/throughput.js';
import { readLastVerifyRun } from '../../db/queries/verify-runs.js';
import { LedgerIndexerError } from '../../errors.js';
import type { StatusPageData, StreamRow } from '../../http/status-page.js';
import { minuteSeries } from '../../http/throughput-chart.js';

import type { RouteSources } from '../route-sources.js';
import { formatLastRun, formatListReading } from './list-reading.js';
import type { HeadProbe } from './service-heads.js';
import { buildStatusReport, type StatusReport } from './status-report.js';
import { type HealthSnapshot, notMigratedLine, snapshotOfStatus } from './stream-health.js';

/** How often the page reloads itself. */
export const PAGE_REFRESH_SECONDS = 10;

/** Minutes the chart spans. */
const CHART_MINUTES = 60;

/**
 * Reads everything the page shows. The database's state is read once and serves both the
 * `/status` report (with the service's heads and the queues, as `/status` has them) and the
 * readiness of each stream.
 */
export async function readStatusPage(
  sources: Omit<RouteSources, 'metrics'>,
  options: { now?: Date | undefined; heads?: HeadProbe | undefined } = {},
): Promise<StatusPageData> {
  const { config, database, logger, signal, readQueues } = sources;
  const now = options.now ?? new Date();
  const behind = await notMigratedLine(database);
  if (behind !== null) throw new LedgerIndexerError(behind);
  // With a probe, the heads shown are the stored ones, asked again only once they are old.
  if (options.heads) await options.heads.refresh(signal);
  const status = await readSyncStatus(database.db, now);
  const report = await buildStatusReport({
    config,
    database,
    logger,
    signal,
    readQueues,
    status,
    askHeads: options.heads === undefined,
    shared: sources.shared,
  });
  const snapshot = await snapshotOfStatus(database, status, now);
  const currentMinute = Math.floor(now.getTime() / 60_000) * 60_000;
  const counts = await readRecordsPerMinute(database.db, {
    since: new Date(currentMinute - (CHART_MINUTES - 1) * 60_000),
    // To the end of the current minute: a writer's clock a little ahead still counts.
    until: new Date(currentMinute + 60_000),
  });
  return {
    now,
    database: report.database,
    refreshSeconds: PAGE_REFRESH_SECONDS,
    totals: {
      records: status.records,
      newestRawId: status.newestRawId,
      nonFinal: status.nonFinal.queued,
      nonFinalDue: status.nonFinal.due,
      rejected: status.rejected,
      conflicts: status.conflicts,
    },
    streams: streamRows(report, snapshot),
    throughput: minuteSeries(counts, now.getTime(), CHART_MINUTES),
    lastVerify: await readLastVerifyRun(database.db),
    queues: report.queues,
    feed: report.feed,
    feedReaders: sources.feedReaders?.() ?? [],
  };
}

function streamRows(report: StatusReport, snapshot: HealthSnapshot): StreamRow[] {
  const health = new Map(snapshot.streams.map((s) => [s.stream, s]));
  return report.streams.map((s) => {
    const h = health.get(s.key);
    return {
      key: s.key,
      watermark: s.watermark,
      backfill: s.backfill,
      progress: h?.backfillProgress ?? 0,
      readBy: formatListReading(s.reading),
      lastRun: formatLastRun(s.lastRun),
      complete: h?.complete ?? false,
      missing: h?.missing ?? [],
      // The report's head (asked now, else stored), or the head of a walk in progress.
      lagRawIds: s.lagRawIds ?? h?.lagRawIds ?? null,
      headSeenAt: s.headSeenAt === null ? null : new Date(s.headSeenAt),
      headError: s.headError,
      lagSeconds: h?.lagSeconds ?? null,
      lastSuccessAt: s.lastSuccessAt === null ? null : new Date(s.lastSuccessAt),
      errorStreak: s.errorStreak,
      lastError: s.lastError,
      nonFinal: s.nonFinal,
      rejected: s.rejected,
      conflicts: s.conflicts,
    };
  });
}
