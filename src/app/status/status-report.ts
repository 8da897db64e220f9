import { type Config, redactUrl } from '../../config.js';
import type { Database } from '../../db/connect.js';
import { type FeedStatus, readFeedStatus } from '../../db/queries/sink-status.js';
import type { StreamStatus } from '../../db/queries/stream-queries.js';
import { readKeptDialect } from '../../db/queries/stream-readings.js';
import { readSyncStatus, type SyncStatus } from '../../db/queries/sync-status.js';
import { isKeyCheckpoint } from '../../domain/checkpoints.js';
import type { Logger } from '../../logger.js';
import type { QueueCounts } from '../../queue/queue-status.js';
import { type ListReading, listReading } from './list-reading.js';
import {
  type HeadReadClient,
  readServiceHeads,
  type ServiceHead,
  storeServiceHeads,
} from './service-heads.js';
import { knownHead, lagRawIds } from './stream-head.js';

/** One stream as `status --json` prints it. */
export interface StreamReport {
  key: string;
  spec: StreamStatus['spec'];
  watermark: number | null;
  walk: StreamStatus['walk'];
  /** Pages walked of the largest `totalPages` seen, for a walk in progress. */
  /** A walk in progress: pages done of the pages listed, or by key the rawId it reached (`cursor`). */
  backfill: { pagesDone: number; totalPages: number; cursor?: number | undefined } | null;
  /**
   * The newest rawId of the stream at the service: read now when `LEDGER_BASE_URL` is set, else
   * the newest one seen before (a walk's page 1, a probe); `null` when never seen.
   */
  headRawId: number | null;
  /** When `headRawId` was seen (ISO time); `null` when never. */
  headSeenAt: string | null;
  /** `headRawId - watermark` (every rawId up to the head without a watermark): how far behind the stream is. */
  lagRawIds: number | null;
  /** Why the service's head could not be read now, when it was asked. */
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
  /** The dialect the list is read in (by key with its count), and what says so; `null` when nothing does. */
  reading: ListReading | null;
  /** The stream's latest run: pages it committed (by key, one a request answered), outcome, end (ISO time). */
  lastRun: { pages: number; outcome: string; finishedAt: string | null } | null;
}

/** The queue counts, or the line saying why they could not be read. */
export type QueueReport = { queues: QueueCounts[] } | { error: string };

/** What `status` reports: the streams with their lag, the totals, the queues and the database. */
export interface StatusReport {
  streams: StreamReport[];
  status: SyncStatus;
  /** `null` without Redis. */
  queues: QueueReport | null;
  /** The change feed's head and its sinks. */
  feed: FeedStatus;
  /** The database, safe to print (no password). */
  database: string;
}

/**
 * Builds `status`'s report: the database's state, the service's head of each stream (one request
 * to page 1 each, when `LEDGER_BASE_URL` is set; else, or not asked, the head last seen) and the queues (when `REDIS_URL` is set; a
 * worker passes its own `readQueues`).
 */
export async function buildStatusReport(input: {
  config: Config;
  database: Database;
  logger: Logger;
  signal: AbortSignal;
  readQueues?: (() => Promise<QueueReport>) | undefined;
  /** The database's state when already read (the status page reads it once for two uses). */
  status?: SyncStatus | undefined;
  /**
   * Ask the service for each stream's head now. Default true (`status`); the HTTP surface keeps
   * the heads fresh through its probe instead, so a page reloaded every few seconds does not
   * ask the service each time.
   */
  askHeads?: boolean | undefined;
  /** What the head reads share with the process's client (budget, metrics). */
  shared?: HeadReadClient | undefined;
}): Promise<StatusReport> {
  const { config, database, logger, signal } = input;
  const status = input.status ?? (await readSyncStatus(database.db));
  const seenAt = new Date();
  const heads =
    config.ledgerBaseUrl === undefined || input.askHeads === false
      ? null
      : await readServiceHeads(config, status.streams, signal, input.shared);
  signal.throwIfAborted();
  if (heads !== null) await storeServiceHeads({ database, heads, seenAt, logger });
  const kept = await keptDialect(config, database);
  const streams = status.streams.map((stream) =>
    streamReport(stream, { live: heads?.get(stream.key), seenAt, kept }),
  );
  let queues: QueueReport | null = null;
  if (input.readQueues) queues = await input.readQueues();
  else if (config.redisUrl !== undefined) {
    const { readQueueStatus } = await import('../../queue/queue-status.js');
    queues = await readQueueStatus(config.redisUrl, { logger, signal });
  }
  const feed = await readFeedStatus(database.db);
  return { streams, status, queues, feed, database: database.describe() };
}

/** The document `status --json` prints and `GET /status` answers. */
export function statusJson(report: StatusReport): Record<string, unknown> {
  const { streams: _omit, ...totals } = report.status;
  return {
    streams: report.streams,
    ...totals,
    queues: report.queues,
    feed: report.feed,
    database: report.database,
  };
}

/** The dialect kept for the configured list address, when one is configured (`LEDGER_PAGING=auto` keeps it). */
async function keptDialect(config: Config, database: Database): Promise<'key' | 'page' | null> {
  const listUrl = config.ledgerListUrl ?? config.ledgerBaseUrl;
  return listUrl === undefined ? null : readKeptDialect(database.db, redactUrl(listUrl));
}

function streamReport(
  stream: SyncStatus['streams'][number],
  input: { live: ServiceHead | undefined; seenAt: Date; kept: 'key' | 'page' | null },
): StreamReport {
  const { live, seenAt } = input;
  const { walk, lastRun } = stream;
  const head = knownHead(stream, { live: { rawId: live?.rawId ?? null, seenAt } });
  return {
    key: stream.key,
    spec: stream.spec,
    watermark: stream.watermark,
    walk,
    backfill: walk
      ? isKeyCheckpoint(walk)
        ? { pagesDone: 0, totalPages: 0, cursor: walk.cursor }
        : { pagesDone: walk.nextPage - 1, totalPages: walk.totalPages }
      : null,
    headRawId: head.rawId,
    headSeenAt: head.seenAt?.toISOString() ?? null,
    lagRawIds: lagRawIds(head.rawId, stream.watermark),
    headError: live?.error ?? null,
    leaseOwner: stream.leaseOwner,
    lastSuccessAt: stream.lastSuccessAt?.toISOString() ?? null,
    lastError: stream.lastError,
    errorStreak: stream.errorStreak,
    nonFinal: stream.nonFinal,
    rejected: stream.rejected,
    conflicts: stream.conflicts,
    reading: listReading({ walk, lastRun, kept: input.kept }),
    lastRun:
      lastRun === null
        ? null
        : {
            pages: lastRun.pages,
            outcome: lastRun.outcome,
            finishedAt: lastRun.finishedAt?.toISOString() ?? null,
          },
  };
}
