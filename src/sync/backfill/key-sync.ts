/**
 * A stream synced by key in one process: a first backfill of a long list walks its rawId ranges
 * in several lanes at once (`lanes.ts`, each range read by `key-backfill.ts`),
 * then the walk by key (`key-walk.ts`) reads what arrived meanwhile and keeps the stream current.
 * A stream synced before is the walk alone, but for a tail far behind its head (a catch-up) and
 * `--full` (a repair), which are runs in the same lanes; a short list is the walk alone. A run
 * killed in the middle leaves its proofs: the next one walks only the stretches they do not cover.
 */
import { KEY_COUNT, SETTLE_MS } from '../../defaults.js';
import { streamKey } from '../../domain/stream-key.js';
import type { KeyRangeTask } from '../key-source.js';
import { type BackfillRun, type BackfillStore, REPAIR_FLOOR, runKind } from '../ports/backfill-store.js';
import type { FetchKeyHead, FetchKeyText } from '../ports/fetches.js';
import { rangeEdges } from '../range-edges.js';
import { type KeyWalkInput, walkByKey } from '../walk/key-walk.js';
import type { WalkResult } from '../walk/walk-types.js';
import { fetchKeyRange, KEY_REQUESTS_PER_RANGE, pendingKeyTasks, planKeyBackfill } from './key-backfill.js';
import { backfillInLanes, DEFAULT_LANES, lanesOf, type RangeDialect, thenWalk } from './lanes.js';
import { runSettling } from './run-check.js';

/** What {@link syncByKey} needs: the walk's, and what a run in lanes takes besides. */
export interface KeySyncInput extends KeyWalkInput {
  /** The proofs of a backfill in lanes; without it, a first backfill is one walk. */
  backfills?: BackfillStore | undefined;
  /** Ranges a run walks at once: a number, or read as it goes (the client's in-flight size). Default 2. */
  lanes?: number | (() => number) | undefined;
  /** Reads the newest rawId (`order=desc&count=1`): a run's head. Without it, every stretch is walked. */
  fetchKeyHead?: FetchKeyHead | undefined;
  /** Answers as text for a backfill store that parses them elsewhere (`fetchKeyRange`). Optional. */
  fetchKeyText?: FetchKeyText | undefined;
  /** RawIds a range. Default a hundred full answers' worth. */
  rangeWidth?: number | undefined;
  /** Checks of a backfill in lanes before it gives up. Default 5. */
  maxRounds?: number | undefined;
}

/** Heads below this many full answers are backfilled by the walk alone: lanes would not pay. */
const MIN_ANSWERS_FOR_LANES = 10;

/**
 * A tail whose head is more than this many full answers above its settled mark reads the stretch
 * in lanes, as a first backfill does, each range committed with its proof as it comes; the walk
 * reads one answer at a time. Below it the walk is quick enough (200 ms away, sixteen answers in
 * about three seconds) and costs no run: no head answer read again, no answer cut at a range's
 * end, no check.
 */
export const CATCH_UP_ANSWERS = 16;

/**
 * Syncs one stream by key: a first backfill of a long list (or one a killed run left) in lanes,
 * then the walk, which reads the rest; a tail far behind its head hands the stretch to lanes too
 * (a catch-up), and `full` reads the whole list again in them (a repair), unless the run just
 * ended read it from its start. Returns the walk's result with the lanes' work added.
 */
export async function syncByKey(options: KeySyncInput): Promise<WalkResult> {
  // Where the lanes' ranges meet, and the walk after them on top of their head.
  const input = { ...options, edges: options.edges ?? rangeEdges() };
  const canLanes = lanesApply(input);
  // Right after the lanes, within their settling window: the tail reads what arrived since their
  // head, and the next run reads their unsettled span again; not a full walk, which would read
  // again what they have just proven.
  const walkAfter = (afterLanes: boolean, catchUp: boolean) =>
    walkByKey({
      ...input,
      full: !afterLanes && input.full,
      fromWatermark: afterLanes,
      handOverAnswers: canLanes && catchUp ? CATCH_UP_ANSWERS : undefined,
    });
  // `full` too: a stream never backfilled has nothing to walk again, and a run a killed one left
  // (a first backfill, a catch-up) must end (its run closed, the deferred indexes built), not be
  // walked around.
  const lanes = canLanes ? await backfillByKeyInLanes(input, null) : null;
  return thenWalk(lanes, async (afterLanes) => {
    if (canLanes && input.full === true && lanes?.mode !== 'backfill') {
      const repaired = await backfillByKeyInLanes(input, 'repair');
      if (repaired !== null) return thenWalk(repaired, (afterRepair) => walkAfter(afterRepair, false));
    }
    const walked = await walkAfter(afterLanes, !afterLanes && input.full !== true);
    if (walked.behind === undefined) return walked;
    const caughtUp = await backfillByKeyInLanes(input, walked.behind);
    return thenWalk(caughtUp, (afterCatchUp) => walkAfter(afterCatchUp, false));
  });
}

/**
 * Whether `syncByKey` reads in lanes at all: with the proofs' store and the head's request, and
 * more than one lane (a fixed single lane is a plain walk; a size read as it goes may grow).
 */
function lanesApply(input: KeySyncInput): boolean {
  const oneLane = typeof input.lanes !== 'function' && (input.lanes ?? DEFAULT_LANES) < 2;
  return input.backfills !== undefined && input.fetchKeyHead !== undefined && !oneLane;
}

/**
 * A backfill in lanes by key: the run's ranges are the rawIds up to the head split evenly
 * (`planKeyBackfill`; a repair's too, its own proofs alone counting), or for a catch-up (`behind`,
 * a tail that handed over) those between where the tail would have begun and the head its first
 * answer showed; each round walks what the proofs leave (`pendingKeyTasks`), and a range under
 * way near the end gives its upper half to an idle lane. A run a killed one left is taken over
 * first. `null` when the stream needs no lanes.
 */
function backfillByKeyInLanes(
  input: KeySyncInput,
  behind: NonNullable<WalkResult['behind']> | 'repair' | null,
): Promise<WalkResult | null> {
  const { backfills, fetchKeyHead, spec } = input;
  if (!backfills || !fetchKeyHead) return Promise.resolve(null);
  const key = streamKey(spec);
  const count = countOf(input);
  const width = input.rangeWidth ?? count * KEY_REQUESTS_PER_RANGE;
  const lanes = lanesOf(input.lanes, DEFAULT_LANES);
  const pending = (run: BackfillRun) =>
    pendingKeyTasks(backfills, run, laneWidth(input, run.headRawId - (run.floor ?? 0), width));
  const dialect: RangeDialect<KeyRangeTask> = {
    name: 'key',
    async plan(id) {
      if (behind !== null && behind !== 'repair') {
        const { head, from, gapFloor } = behind;
        const run = await backfills.startRun({
          id,
          key,
          headRawId: head,
          totalPages: 0,
          floor: from,
          gapFloor,
        });
        return run && { run, tasks: await pending(run) };
      }
      const minHead = (width / KEY_REQUESTS_PER_RANGE) * MIN_ANSWERS_FOR_LANES;
      const floor = behind === 'repair' ? REPAIR_FLOOR : null;
      const planned = await planKeyBackfill({
        store: backfills,
        fetchKeyHead,
        spec,
        id,
        width,
        minHead,
        floor,
      });
      return planned && { run: planned.run, tasks: await pending(planned.run) };
    },
    pending,
    // Cut a whole number of answers above the cursor (without holes, its last answer ends there).
    split: ({ cursor, upTo }) => {
      if (upTo - cursor < 4 * count) return null;
      const cut = cursor + count * Math.floor((upTo - cursor) / (2 * count));
      return { cut, rest: { after: cut, upTo } };
    },
    walk: async (task, lane, run) => {
      await fetchKeyRange({
        store: backfills,
        fetchKeyPage: input.fetchKeyPage,
        fetchKeyText: input.fetchKeyText,
        spec,
        backfillId: run.id,
        task,
        count: input.count,
        split: lane.split,
        batchBytes: () => laneBatchBytes(lane.active()),
        signal: lane.signal,
        logger: input.logger,
        settle: runSettling(run, input.settleMs ?? SETTLE_MS),
        edges: input.edges,
        stored: runKind(run) === 'repair',
        now: input.now,
        onCommit: lane.onCommit,
      });
    },
  };
  return backfillInLanes({ ...input, backfills, lanes, anew: behind !== null }, dialect);
}

/**
 * The width of the ranges a backfill plans over `span` rawIds: `width`, or narrower, so that a
 * short list still has a range for every lane from the start (rather than gaining its lanes split
 * by split, one answer apart), in whole answers and never under four of them.
 */
function laneWidth(input: Pick<KeySyncInput, 'lanes' | 'count'>, span: number, width: number): number {
  const count = countOf(input);
  const even = Math.ceil(span / lanesOf(input.lanes, DEFAULT_LANES)() / count) * count;
  return Math.max(4 * count, Math.min(width, even));
}

/** Records asked a request: `input.count`, else the service's own clients' hundred. */
function countOf(input: Pick<KeySyncInput, 'count'>): number {
  return input.count ?? KEY_COUNT;
}

/**
 * The answers' text all lanes hold at most, their batches filling and committing together: what
 * they hold stays flat however many lanes the budget and the distance call for. Each lane holds
 * two batches (one committing while the next fills), so a lane's batch is full at its share of
 * half of it: at 3 lanes (nearby) past the sixteen answers a commit takes anyway, at 26 lanes (a
 * budget of 100 a second 200 ms away) about three answers of a hundred records. Far away a commit
 * costs the run no time (the lanes wait on the service), and each answer held costs memory twice
 * over (its text, then its encoding): 32 MiB took 289-298 MB at 100 a second, 16 MiB 259-268 MB
 * in the same time (bench/NOTES.md).
 */
export const LANES_HELD_BYTES = 16 * 1024 * 1024;

/** The most bytes of answers in one lane's batch while `lanes` lanes walk: see {@link LANES_HELD_BYTES}. */
export function laneBatchBytes(lanes: number): number {
  return Math.floor(LANES_HELD_BYTES / (2 * Math.max(1, lanes)));
}
