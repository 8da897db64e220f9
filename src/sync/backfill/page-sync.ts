/**
 * A stream synced by page number in one process: a first backfill of the global list walks its
 * pages in ranges, several lanes at once (`lanes.ts`, each range read by `page-range.ts`,
 * as the workers' range jobs are), then the walk (`walk-stream.ts`) reads what arrived meanwhile
 * and keeps the stream current. A filtered list, a short one or a stream synced before is the
 * walk alone. A run killed in the middle leaves its proofs: the next one walks only the gaps they
 * leave.
 */
import { PAGES_PER_RANGE, SETTLE_MS } from '../../defaults.js';
import { type BackfillStore, REPAIR_FLOOR } from '../ports/backfill-store.js';
import { walkStream } from '../walk/walk-stream.js';
import type { WalkResult, WalkStreamInput } from '../walk/walk-types.js';
import { backfillInLanes, type RangeDialect, thenWalk } from './lanes.js';
import {
  fetchRange,
  pageRepairTasks,
  pendingPageTasks,
  planBackfill,
  type RangeTask,
  rangeStarts,
  supportsParallelBackfill,
} from './page-range.js';

/** What {@link syncByPage} needs: the walk's, and the proofs of a backfill in lanes. */
export interface PageSyncInput extends WalkStreamInput {
  /** The proofs of a backfill in lanes; without it, a first backfill is one walk. */
  backfills?: BackfillStore | undefined;
  /** Ranges walked at once by a first backfill: a number, or read as it goes. Default: one walk. */
  lanes?: number | (() => number) | undefined;
  /** Pages a range. Default `PAGES_PER_RANGE`. */
  pagesPerRange?: number | undefined;
  /** Checks of a backfill in lanes before it gives up. Default 5. */
  maxRounds?: number | undefined;
}

/** Lists of fewer pages are backfilled by the walk alone: lanes would not pay. */
const MIN_PAGES_FOR_LANES = 4 * PAGES_PER_RANGE;

/** Pages each part of a split range keeps at least. */
const MIN_PAGES_SPLIT = 4;

/**
 * Syncs one stream by page number: a first backfill of a long global list in lanes, then the
 * walk, which reads the rest; `full` reads the whole list again in lanes (a repair), unless the
 * run just ended read it from its start. Returns the walk's result with the lanes' work added.
 */
export async function syncByPage(input: PageSyncInput): Promise<WalkResult> {
  const lanes = await backfillByPageInLanes(input, false);
  return thenWalk(lanes, async (afterLanes) => {
    const repaired =
      input.full === true && lanes?.mode !== 'backfill' ? await backfillByPageInLanes(input, true) : null;
    if (repaired !== null) return thenWalk(repaired, () => walkStream({ ...input, full: false }));
    return walkStream({ ...input, full: !afterLanes && input.full });
  });
}

/**
 * The first backfill (or with `repair`, the repair) in lanes by page number: the run's pages split
 * into ranges (`planBackfill`), each read in ascending page order; a round that leaves gaps walks
 * each from a page above it down past it. `null` when the stream needs no backfill in lanes.
 */
function backfillByPageInLanes(input: PageSyncInput, repair: boolean): Promise<WalkResult | null> {
  const { backfills, spec } = input;
  if (!backfills || input.lanes === undefined || !supportsParallelBackfill(spec))
    return Promise.resolve(null);
  const pagesPerRange = input.pagesPerRange ?? PAGES_PER_RANGE;
  const starts = rangeStarts();
  const dialect: RangeDialect<RangeTask> = {
    name: 'page',
    plan: (id) =>
      planBackfill({
        store: backfills,
        fetchPage: input.fetchPage,
        spec,
        id,
        pagesPerRange,
        minPages: MIN_PAGES_FOR_LANES,
        floor: repair ? REPAIR_FLOOR : null,
      }),
    pending: async (run, check) =>
      check ? pageRepairTasks(backfills, check) : pendingPageTasks(backfills, run, pagesPerRange),
    // Near the end, a range gives the upper half of its pages to an idle lane: the last ranges
    // would otherwise be read one page at a time each, the budget left unspent (bench/NOTES.md).
    split: ({ cursor, upTo, open }) => {
      if (upTo - cursor < 2 * MIN_PAGES_SPLIT) return null;
      const cut = cursor + Math.floor((upTo - cursor) / 2);
      return {
        cut,
        rest: { fromPage: cut + 1, toPage: open ? null : upTo, stopBelowRawId: null, seekRawId: null },
      };
    },
    walk: async (task, lane, run) => {
      await fetchRange({
        store: backfills,
        fetchPage: input.fetchPage,
        spec,
        backfillId: run.id,
        task,
        signal: lane.signal,
        logger: input.logger,
        settle: { headAt: run.headAt, windowMs: input.settleMs ?? SETTLE_MS },
        now: input.now,
        onCommit: lane.onCommit,
        split: lane.split,
        starts,
      });
    },
  };
  return backfillInLanes({ ...input, backfills, lanes: input.lanes, anew: repair }, dialect);
}
