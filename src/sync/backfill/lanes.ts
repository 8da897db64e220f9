/**
 * A backfill in lanes, in one process, the same in both dialects: a run is planned (or one a
 * killed run left is taken over), its ranges are walked several at once, each lane reading and
 * committing with the proofs of what it read, and the check moves the watermark once the proofs
 * reach the run's head; a round that leaves gaps walks them again. A first backfill's run covers
 * the list from rawId 0; a catch-up's (by key, a tail far behind) the stretch above the settled
 * mark; a repair's (`sync --full`) the whole list again, with its own proofs. What differs by
 * dialect (how a run is planned, what is left to walk, how one range is read) is the
 * {@link RangeDialect}'s.
 */

import { randomUUID } from 'node:crypto';
import { anySignal } from '../../abort.js';
import { LEASE_MS } from '../../defaults.js';
import { type StreamSpec, streamKey } from '../../domain/stream-key.js';
import { MalformedResponseError } from '../../errors.js';
import { type BackfillRun, type BackfillStore, runKind } from '../ports/backfill-store.js';
import type { SyncStore, WriteCounts } from '../ports/sync-store.js';
import { openStreamSession, type StreamSession } from '../stream-session.js';
import { quietLogger, type SyncLogger } from '../sync-logger.js';
import { emptyWalkResult, type PageEvent, type WalkResult } from '../walk/walk-types.js';
import { addCounts, zeroCounts } from '../write-counts.js';
import { type CheckOutcome, checkBackfill } from './run-check.js';

/** What a lane hands the dialect's walk of one range. */
export interface LaneContext {
  signal: AbortSignal;
  /** Lanes walking now. */
  active: () => number;
  /**
   * For a range under way that can give its upper part to an idle lane: asked after each answer
   * that leaves more to read, it returns where to end the range (the rest is queued), or `null`.
   * `open`: the range has no end of its own (`upTo` is the list's end as last seen).
   */
  split: (at: { cursor: number; upTo: number; open?: boolean }) => number | null;
  /** Called after each commit: the run's counts and progress, and the lease's renewal. */
  onCommit: (committed: { answers: number; records: number; counts: WriteCounts }) => Promise<void>;
}

/** How one dialect plans and reads the ranges of a backfill in lanes. */
export interface RangeDialect<Task> {
  /** `key` or `page`: the run's log line. */
  name: 'key' | 'page';
  /** Plans a new run; `null` when the list is too short for lanes (a walk reads it). */
  plan(id: string): Promise<{ run: BackfillRun; tasks: Task[] } | null>;
  /** The ranges a run's proofs leave, when a run is taken over or a round left gaps. */
  pending(run: BackfillRun, check: Extract<CheckOutcome, { status: 'repair' }> | null): Promise<Task[]>;
  /** Reads one range, committing as it goes. */
  walk(task: Task, lane: LaneContext, run: BackfillRun): Promise<void>;
  /**
   * Where a range under way gives its upper part to an idle lane (`cut`, and the range queued
   * above it); `null`: not worth it. Absent: ranges of this dialect are never split.
   */
  split?:
    | ((at: { cursor: number; upTo: number; open?: boolean }) => { cut: number; rest: Task } | null)
    | undefined;
}

/** What a backfill in lanes needs besides its dialect. */
export interface LanesInput {
  store: SyncStore;
  backfills: BackfillStore;
  spec: StreamSpec;
  /** Who holds the stream's lease while the lanes run. */
  owner: string;
  /** Lease length; renewed as the lanes commit. Default `LEASE_MS.walk`. */
  leaseMs?: number | undefined;
  /** Once aborted, each lane stops after committing what it read. */
  signal?: AbortSignal | undefined;
  /** Called after each commit (progress bars, metrics). */
  onPage?: ((event: PageEvent) => void) | undefined;
  logger?: SyncLogger | undefined;
  /** Lanes at once: a number, or read as the backfill goes (the client's in-flight size). */
  lanes: number | (() => number);
  /** Checks before it gives up. Default 5. */
  maxRounds?: number | undefined;
  /** The settling window the check settles the run's stretch by, ms. Default `SETTLE_MS`. */
  settleMs?: number | undefined;
  /**
   * The stream is synced already and a run is planned all the same: its tail is far behind the
   * head (a catch-up, proving the stretch above the settled mark), or `sync --full` reads the
   * list again (a repair). Default: a first backfill, planned only for a stream never synced.
   */
  anew?: boolean | undefined;
}

/** Lanes of a backfill without a size to follow. */
export const DEFAULT_LANES = 2;

/** `lanes` read as the run goes (`fallback` when absent), at least one. */
export function lanesOf(lanes: number | (() => number) | undefined, fallback = 1): () => number {
  if (typeof lanes === 'function') return () => Math.max(1, lanes());
  const fixed = Math.max(1, lanes ?? fallback);
  return () => fixed;
}

/**
 * A backfill in lanes: `null` when the stream needs none (synced before and not catching up, or a
 * list too short for lanes); else what the lanes stored, `finished` once the check proved the run.
 */
export async function backfillInLanes<Task>(
  input: LanesInput,
  dialect: RangeDialect<Task>,
): Promise<WalkResult | null> {
  const { backfills, spec, owner } = input;
  const key = streamKey(spec);
  const leaseMs = input.leaseMs ?? LEASE_MS.walk;
  const logger = input.logger ?? quietLogger;
  // A run in progress (a first backfill, or a catch-up) is taken over; else a stream with a
  // watermark or a walk is past its first backfill.
  const running = await backfills.runningRun(key);
  if (!running && !input.anew && (await backfills.streamStarted(key))) return null;
  const session = await openStreamSession({
    store: input.store,
    spec,
    owner,
    leaseMs,
    signal: input.signal,
    logger,
  });
  let planned: { run: BackfillRun; tasks: Task[] } | null = null;
  try {
    if (running) planned = { run: running, tasks: await dialect.pending(running, null) };
    else if (input.anew || (session.state.watermark === null && session.state.walk === null))
      planned = await dialect.plan(randomUUID());
  } catch (error) {
    await session.end({ error });
    throw error;
  }
  if (!planned) {
    await session.end({ finished: true });
    return null;
  }
  const { run } = planned;
  const wanted = lanesOf(input.lanes, DEFAULT_LANES);
  const kind = runKind(run);
  logger.info(
    { stream: key, backfill: run.id, head: run.headRawId, floor: run.floor, lanes: wanted() },
    `${kind} by ${dialect.name} in lanes`,
  );
  // A catch-up stands in for a tail; a repair reads the list from its start, as a backfill does.
  const mode = kind === 'catch-up' ? 'tail' : 'backfill';
  const result = emptyWalkResult(key, mode, dialect.name, session.state.watermark);
  try {
    let tasks = planned.tasks;
    for (let round = run.round; ; round++) {
      await walkRanges({ input, dialect, run, tasks, session, result, wanted });
      if (input.signal?.aborted) break;
      const outcome = await checkBackfill({
        store: backfills,
        syncStore: input.store,
        spec,
        backfillId: run.id,
        round,
        owner,
        leaseMs,
        maxRounds: input.maxRounds,
        settleMs: input.settleMs,
        logger,
      });
      if (outcome.status === 'done') {
        result.watermark = outcome.watermark;
        result.finished = true;
        return result;
      }
      if (outcome.status === 'failed')
        throw new MalformedResponseError(
          `stream ${key} by ${dialect.name}`,
          `${outcome.gaps.length} stretch(es) below rawId ${run.headRawId} still unproven after ${round + 1} rounds`,
          '',
        );
      tasks = await dialect.pending(run, outcome);
    }
  } catch (error) {
    await session.end({ error });
    if (input.signal?.aborted) return result;
    throw error;
  }
  // Stopped by the signal between rounds.
  await session.end({ finished: false });
  return result;
}

/**
 * A stream's run: the first backfill in lanes (`null`: it needed none), then, once they proved it,
 * the walk (`afterLanes`: right after them), as one result with the lanes' work added.
 */
export async function thenWalk(
  lanes: WalkResult | null,
  walk: (afterLanes: boolean) => Promise<WalkResult>,
): Promise<WalkResult> {
  if (lanes !== null && !lanes.finished) return lanes;
  const walked = await walk(lanes !== null);
  if (lanes === null) return walked;
  const counts = zeroCounts();
  addCounts(counts, lanes.counts);
  addCounts(counts, walked.counts);
  return {
    ...walked,
    mode: lanes.mode,
    pages: lanes.pages + walked.pages,
    records: lanes.records + walked.records,
    counts,
  };
}

/**
 * Walks the ranges in as many lanes as `wanted` says, each lane taking the next range once its own
 * is done. After each commit, lanes are added up to the size; a lane above it ends once its range
 * is done. The first failure stops the other lanes (after they commit what they read) and is
 * thrown.
 */
async function walkRanges<Task>(args: {
  input: LanesInput;
  dialect: RangeDialect<Task>;
  run: BackfillRun;
  tasks: Task[];
  session: StreamSession;
  result: WalkResult;
  wanted: () => number;
}): Promise<void> {
  const { input, dialect, run, result, session, wanted } = args;
  const queue = [...args.tasks];
  const stop = new AbortController();
  const signal = anySignal([input.signal, stop.signal]);
  const running = new Set<Promise<void>>();
  let active = 0;
  let failure: { reason: unknown } | null = null;
  const start = (): void => {
    active++;
    const laneRun: Promise<void> = lane()
      .catch((error: unknown) => {
        failure ??= { reason: error };
        stop.abort(error);
      })
      .finally(() => running.delete(laneRun));
    running.add(laneRun);
  };
  const topUp = (): void => {
    while (!signal.aborted && queue.length > 0 && active < wanted()) start();
  };
  const context: LaneContext = {
    signal,
    active: () => active,
    // Near the end no range is left to start: a range under way gives its upper part to a new lane.
    split: (at) => {
      if (signal.aborted || queue.length > 0 || active >= wanted()) return null;
      const split = dialect.split?.(at) ?? null;
      if (split === null) return null;
      queue.push(split.rest);
      topUp();
      return split.cut;
    },
    onCommit: async ({ answers, records, counts }) => {
      result.pages += answers;
      result.records += records;
      addCounts(result.counts, counts);
      input.onPage?.({
        key: result.key,
        mode: result.mode,
        page: result.pages,
        pages: answers,
        // By key a list has no page count; by page number the run's, for the bar's ETA.
        totalPages: dialect.name === 'page' ? run.totalPages : 0,
        records,
        counts,
      });
      // Range commits carry no fence: nothing to wait for before a renewal.
      await session.renew();
      topUp();
    },
  };
  const lane = async (): Promise<void> => {
    try {
      for (let task = queue.shift(); task !== undefined && !signal.aborted; task = queue.shift()) {
        await dialect.walk(task, context, run);
        // More lanes than the size wants: this one ends (the others take the ranges left).
        if (active > wanted()) return;
      }
    } finally {
      active--;
    }
  };
  topUp();
  while (running.size > 0) await Promise.race(running);
  if (failure !== null && !input.signal?.aborted)
    throw stop.signal.reason ?? (failure as { reason: unknown }).reason;
}
