/**
 * A run's check, for both dialects: once its ranges are read, the proofs judged against its head;
 * complete, the stream's watermark moves there through the fenced lease; otherwise the gaps are
 * handed back for the dialect to walk again (`page-range.ts`, `key-backfill.ts`). With it, what
 * a run's proofs count (its kind: a first backfill, a catch-up, a repair), how its ranges judge
 * the gaps they read, and the settling state a proven run leaves.
 */
import { LEASE_MS, SETTLE_MS } from '../../defaults.js';
import { backfillOwner } from '../../domain/lease-owner.js';
import { mergeRanges, type RawIdRange } from '../../domain/raw-id-ranges.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { streamKey } from '../../domain/stream-key.js';
import { type CompletenessReport, judgeCompleteness } from '../../verify/completeness.js';
import type { BackfillRun, BackfillStore } from '../ports/backfill-store.js';
import type { SettleState, SyncStore, WriteCounts } from '../ports/sync-store.js';
import { settleAfterWalk } from '../settle.js';
import { openStreamSession } from '../stream-session.js';
import { quietLogger, type SyncLogger } from '../sync-logger.js';

/** What one range walk read, in either dialect. */
export interface RangeResult {
  pages: number;
  records: number;
  counts: WriteCounts;
  /** The lowest rawId seen, `null` when none. */
  lowest: number | null;
}

/** What a completeness check decided. */
export type CheckOutcome =
  | { status: 'done'; watermark: number }
  | { status: 'repair'; gaps: RawIdRange[]; report: CompletenessReport; head: number }
  | { status: 'failed'; gaps: RawIdRange[] };

/**
 * Checks a run once its ranges are fetched. It first renews the stream lease the backfill holds, in
 * a stream session (`LeaseLostError` when another runner took it meanwhile: try again later). Complete: moves the
 * stream's watermark to the run's head through that fenced lease, so it only ever moves past
 * proven ranges, compacts the stream's proof and releases the lease. Otherwise plans one repair
 * walk per gap, starting on a page that still lies above the gap and walking down until past it,
 * and keeps the lease; after `maxRounds` checks the run fails with its gaps recorded and
 * releases it.
 */
export async function checkBackfill(input: {
  store: BackfillStore;
  syncStore: SyncStore;
  spec: StreamSpec;
  backfillId: string;
  round: number;
  /** Lease length, extended by the range commits once a third of it has passed. Default 60000 ms. */
  leaseMs?: number | undefined;
  maxRounds?: number | undefined;
  /** Who holds the stream's lease for the run. Default: the run's own owner ({@link backfillOwner}). */
  owner?: string | undefined;
  /** The settling window, ms (see `settle.ts`). Default `SETTLE_MS`. */
  settleMs?: number | undefined;
  logger?: SyncLogger | undefined;
}): Promise<CheckOutcome> {
  const logger = input.logger ?? quietLogger;
  const key = streamKey(input.spec);
  const run = await input.store.getRun(input.backfillId);
  if (!run) throw new Error(`backfill ${input.backfillId} not found`);
  if (run.status === 'done') return { status: 'done', watermark: run.headRawId };
  const session = await openStreamSession({
    store: input.syncStore,
    spec: input.spec,
    owner: input.owner ?? backfillOwner(run.id),
    leaseMs: input.leaseMs ?? LEASE_MS.worker,
    logger,
  });
  const report = judgeCompleteness(await runProofs(input.store, run), run.headRawId);
  if (report.complete) {
    try {
      // Fenced, and only while the proofs still reach the head (a crash may have taken one back).
      await input.syncStore.advanceWatermark(session.lease(), run.headRawId, {
        settle: settledByRun(run, session.state, input.settleMs ?? SETTLE_MS),
        proven: { backfillId: run.id, floor: run.floor },
      });
    } catch (error) {
      await session.end({ error });
      throw error;
    }
    await session.end({ finished: true });
    // Before the run is marked done, so a check that dies here compacts on its retry.
    const ranges = await input.store.compactProvenRanges(key);
    await input.store.recordCheck({ id: run.id, round: input.round, gaps: [], status: 'done' });
    logger.info(
      { stream: key, backfill: run.id, round: input.round, watermark: run.headRawId, ranges },
      'backfill proven complete',
    );
    return { status: 'done', watermark: run.headRawId };
  }
  if (input.round >= (input.maxRounds ?? 5)) {
    const error = `${report.gaps.length} gap(s) still unproven after ${input.round} checks`;
    await input.store.recordCheck({
      id: run.id,
      round: input.round,
      gaps: report.gaps,
      status: 'failed',
      error,
    });
    await session.end({ error });
    logger.error({ stream: key, backfill: run.id, gaps: report.gaps.length }, 'backfill left unproven gaps');
    return { status: 'failed', gaps: report.gaps };
  }
  await input.store.recordCheck({ id: run.id, round: input.round, gaps: report.gaps, status: 'running' });
  logger.info(
    { stream: key, backfill: run.id, round: input.round, gaps: report.gaps.length },
    'repairing gaps',
  );
  return { status: 'repair', gaps: report.gaps, report, head: run.headRawId };
}

/**
 * How a run's ranges judge the gaps they read (`settle.ts`): against its head's time, gaps at or
 * below a catch-up's `gapFloor` settled already (as for the walk it stands in for).
 */
export function runSettling(
  run: Pick<BackfillRun, 'headAt' | 'gapFloor'>,
  windowMs: number,
): { headAt: number; windowMs: number; floor: number | null } {
  return { headAt: run.headAt, windowMs, floor: run.gapFloor };
}

/**
 * What a run's check counts as proven: every proof of the stream for a first backfill; for a
 * catch-up, the rawIds up to its floor and its own proofs above, not older ones (a first
 * backfill's proofs above the settled mark are of reads whose gaps may since have filled); for a
 * repair, its own proofs alone (it reads the whole list again).
 */
export async function runProofs(
  store: Pick<BackfillStore, 'provenRanges'>,
  run: Pick<BackfillRun, 'id' | 'key' | 'floor'>,
): Promise<RawIdRange[]> {
  if (run.floor === null) return store.provenRanges(run.key);
  const own = await store.provenRanges(run.key, run.id);
  return run.floor < 0 ? own : mergeRanges([{ lo: 0, hi: run.floor }, ...own]);
}

/**
 * The settling state a proven run leaves, from the stream's as stored (`settleAfterWalk`, as for
 * a walk that read from its settled mark when the run read its head): everything below the lowest
 * gap its ranges read before it could settle (the whole stretch when none did), a waiting head a
 * window old by then settled too; the heads still waiting keep waiting, and the run's head waits
 * after them while a gap may fill below it. A catch-up that replaced them with its own head made a
 * stream synced more often than the window never settle: each run found its tail far behind again
 * and read the whole unsettled stretch once more.
 */
export function settledByRun(
  run: Pick<BackfillRun, 'headRawId' | 'headAt' | 'openGap'>,
  stored: { settle: SettleState; watermark: number | null },
  windowMs: number,
): SettleState {
  return settleAfterWalk({
    state: { ...stored.settle, watermark: stored.watermark },
    mode: stored.watermark === null ? 'backfill' : 'tail',
    settledBelow: run.openGap === null ? Number.POSITIVE_INFINITY : run.openGap - 1,
    fromPageOne: true,
    startedAt: run.headAt,
    windowMs,
    watermark: run.headRawId,
    headAt: run.headAt,
    now: run.headAt,
  });
}
