import type { Database } from '../../db/connect.js';
import { selectProvenRanges } from '../../db/queries/backfill-proofs.js';
import { readStreamFacts, type StreamFacts } from '../../db/queries/stream-facts.js';
import { readSyncStatus, type SyncStatus } from '../../db/queries/sync-status.js';
import { readLastVerifyRun, type VerifyRun } from '../../db/queries/verify-runs.js';
import { readMigrationState } from '../../db/schema/migrate-database.js';
import { isKeyCheckpoint } from '../../domain/checkpoints.js';
import type { RawIdRange } from '../../domain/raw-id-ranges.js';
import type { StateSnapshot, StreamGaugeValues } from '../../metrics/index.js';
import { headAgeSeconds, knownHead, lagRawIds } from './stream-head.js';

/** One stream's health: its gauges, and what keeps it from being ready (empty when ready). */
export interface StreamHealth extends StreamGaugeValues {
  missing: string[];
}

/** What `/ready` answers: every followed stream ready, else what is missing per stream. */
export interface Readiness {
  ready: boolean;
  /** Set when nothing can be judged (no stream yet, a database behind the code). */
  reason?: string;
  streams: Array<{ stream: string; ready: boolean; missing: string[] }>;
}

type StatusStream = SyncStatus['streams'][number];

/**
 * Why a stream is not ready, from the database alone: it must have a watermark (a first walk
 * finished), no backfill walk in progress, no parallel backfill running (a catch-up of a tail far
 * behind is a tail: what the mirror holds is complete up to its watermark), its latest parallel
 * backfill must not have failed its completeness check, unless a later run of the stream ended
 * well, and the latest `verify` must not have found it incomplete, unless that verify began
 * before the stream's backfill ended (only a later verify clears it).
 */
export function notReadyReasons(
  stream: StatusStream,
  facts: StreamFacts | undefined,
  lastVerify: VerifyRun | null = null,
): string[] {
  const missing: string[] = [];
  if (stream.watermark === null) missing.push('never completely backfilled (no watermark)');
  if (stream.walk?.mode === 'backfill') {
    const at = isKeyCheckpoint(stream.walk)
      ? `by key at rawId ${stream.walk.cursor}`
      : `page ${stream.walk.nextPage - 1} of ${stream.walk.totalPages}`;
    missing.push(`backfill in progress: ${at}`);
  }
  const run = facts?.latestBackfill;
  if (run?.status === 'running' && run.floor === null) {
    missing.push(`parallel backfill running (completeness check round ${run.round})`);
  }
  const succeededSince =
    run?.finishedAt != null && stream.lastSuccessAt !== null && stream.lastSuccessAt > run.finishedAt;
  if (run?.status === 'failed' && !succeededSince) {
    missing.push(`last completeness check failed: ${run.error ?? 'unproven gaps left'}`);
  }
  const verdict = verifyVerdict(stream, facts, lastVerify);
  if (verdict !== null) missing.push(verdict);
  return missing;
}

/** What the latest `verify` found wrong with the stream, when it still judges it; else null. */
function verifyVerdict(
  stream: StatusStream,
  facts: StreamFacts | undefined,
  verify: VerifyRun | null,
): string | null {
  if (verify === null || stream.watermark === null) return null;
  if (!verify.summary.incompleteStreams.includes(stream.key)) return null;
  const run = facts?.latestBackfill;
  const parallelEnd = run?.status === 'done' ? run.finishedAt : null;
  const ends = [stream.backfilledAt, parallelEnd].filter((d): d is Date => d !== null);
  const backfillEnd = ends.length === 0 ? null : new Date(Math.max(...ends.map((d) => d.getTime())));
  // A verify that began before the backfill ended judged a stream that has changed since.
  if (backfillEnd !== null && verify.startedAt < backfillEnd) return null;
  const problems = verify.summary.streamProblems?.[stream.key] ?? [];
  const found = problems.length > 0 ? `: ${problems.join('; ')}` : '';
  return `last verify (finished ${verify.finishedAt.toISOString()}) found it incomplete${found}; run verify again once repaired`;
}

/**
 * Share of a backfill done: pages walked, or the rawIds a running parallel backfill has proven
 * (`proven`: the run's own proofs for a catch-up or a repair, of the stretch above its floor).
 */
export function backfillProgress(
  stream: StatusStream,
  facts: StreamFacts | undefined,
  proven: readonly RawIdRange[] | undefined,
): number {
  const run = facts?.latestBackfill;
  if (run?.status === 'running' && proven !== undefined) {
    const from = run.floor === null ? 0 : run.floor + 1;
    const span = run.headRawId - from + 1;
    let covered = 0;
    for (const range of proven) {
      const hi = Math.min(range.hi, run.headRawId);
      const lo = Math.max(range.lo, from);
      if (hi >= lo) covered += hi - lo + 1;
    }
    return span > 0 ? Math.min(covered / span, 1) : 0;
  }
  if (stream.walk?.mode === 'backfill') {
    const { walk } = stream;
    // By key: how far up the rawIds the walk is, of the head last seen.
    if (isKeyCheckpoint(walk)) return stream.headRawId ? Math.min(walk.cursor / stream.headRawId, 1) : 0;
    return walk.totalPages > 0 ? Math.min((walk.nextPage - 1) / walk.totalPages, 1) : 0;
  }
  return stream.watermark === null ? 0 : 1;
}

function streamHealth(input: {
  stream: StatusStream;
  facts: StreamFacts | undefined;
  proven: readonly RawIdRange[] | undefined;
  lastVerify: VerifyRun | null;
  now: Date;
}): StreamHealth {
  const { stream, facts, now } = input;
  const missing = notReadyReasons(stream, facts, input.lastVerify);
  const backfill = facts?.latestBackfill;
  const head = knownHead(stream, {
    backfillHead: backfill?.status === 'running' ? backfill.headRawId : null,
  });
  const time = facts?.watermarkTime ?? null;
  return {
    stream: stream.key,
    watermark: stream.watermark,
    lagRawIds: lagRawIds(head.rawId, stream.watermark) ?? 0,
    headAgeSeconds: headAgeSeconds(head, now),
    lagSeconds: time === null ? null : Math.max((now.getTime() - time.getTime()) / 1000, 0),
    lastSuccessAt: stream.lastSuccessAt,
    errorStreak: stream.errorStreak,
    backfillProgress: backfillProgress(stream, facts, input.proven),
    nonFinal: stream.nonFinal,
    rejected: stream.rejected,
    conflicts: stream.conflicts,
    complete: missing.length === 0,
    missing,
  };
}

/** Every stream's health and the totals. */
export interface HealthSnapshot extends StateSnapshot {
  streams: StreamHealth[];
}

/** Every stream's health and the totals, read from the database at `now`. */
export async function readStateSnapshot(
  database: Pick<Database, 'db'>,
  now: Date = new Date(),
): Promise<HealthSnapshot> {
  return snapshotOfStatus(database, await readSyncStatus(database.db, now), now);
}

/** Every stream's health and the totals, from a `readSyncStatus` already read at `now`. */
export async function snapshotOfStatus(
  database: Pick<Database, 'db'>,
  status: SyncStatus,
  now: Date,
): Promise<HealthSnapshot> {
  const facts = await readStreamFacts(database.db);
  const lastVerify = await readLastVerifyRun(database.db);
  const streams: StreamHealth[] = [];
  for (const stream of status.streams) {
    const own = facts.get(stream.key);
    const run = own?.latestBackfill;
    const proven =
      run?.status === 'running'
        ? await selectProvenRanges(database.db, stream.key, run.floor === null ? undefined : run.id)
        : undefined;
    streams.push(streamHealth({ stream, facts: own, proven, lastVerify, now }));
  }
  return {
    streams,
    records: status.records,
    nonFinalQueued: status.nonFinal.queued,
    nonFinalDue: status.nonFinal.due,
    rejected: status.rejected,
    conflicts: status.conflicts,
    deferredIndexes: status.deferredIndexes.length,
  };
}

/** The line saying the database is behind the code, or `null` when every migration is applied. */
export async function notMigratedLine(database: Database): Promise<string | null> {
  const { applied, expected } = await readMigrationState(database);
  return applied < expected
    ? `the database is not migrated (${applied} of ${expected} migrations applied); run 'ledger-indexer migrate' or 'sync' first`
    : null;
}

/** What `/ready` answers, from the database alone. */
export async function readReadiness(database: Database): Promise<Readiness> {
  const behind = await notMigratedLine(database);
  if (behind !== null) return { ready: false, reason: behind, streams: [] };
  const snapshot = await readStateSnapshot(database);
  const streams = snapshot.streams.map((s) => ({ stream: s.stream, ready: s.complete, missing: s.missing }));
  if (streams.length === 0) {
    return {
      ready: false,
      reason: 'no stream synced yet (run `ledger-indexer sync` or schedule it)',
      streams,
    };
  }
  return { ready: streams.every((s) => s.ready), streams };
}
