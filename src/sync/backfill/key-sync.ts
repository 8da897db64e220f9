/**
 * A stream synced by key in one process: a first backfill of a long list walks its rawId ranges
 * in several lanes at once (`key-backfill.ts`), each lane reading and committing on its own,
 * then the walk by key (`key-walk.ts`) reads what arrived meanwhile and keeps the stream current.
 * A short list or a stream synced before is the walk alone (`--full` included). A run killed in the
 * middle leaves its proofs: the next one walks only the stretches they do not cover.
 */
import { randomUUID } from 'node:crypto';
import { LEASE_MS, SETTLE_MS } from '../../defaults.js';
import { streamKey } from '../../domain/stream-key.js';
import { MalformedResponseError } from '../../errors.js';
import type { KeyRangeTask } from '../key-source.js';
import type { BackfillRun, BackfillStore } from '../ports/backfill-store.js';
import type { FetchKeyText } from '../ports/fetches.js';
import { openStreamSession, type StreamSession } from '../stream-session.js';
import { quietLogger } from '../sync-logger.js';
import { type KeyWalkInput, lanesOf, walkByKey } from '../walk/key-walk.js';
import type { WalkResult } from '../walk/walk-types.js';
import { addCounts, zeroCounts } from '../write-counts.js';
import { fetchKeyRange, KEY_REQUESTS_PER_RANGE, pendingKeyTasks, planKeyBackfill } from './key-backfill.js';
import { checkBackfill } from './parallel-backfill.js';

/**
 * What {@link syncByKey} needs: the walk's, and what the backfill in lanes takes besides. `lanes`
 * are also the ranges a first backfill walks at once (default 2), and without `fetchKeyHead` a
 * first backfill is one walk.
 */
export interface KeySyncInput extends KeyWalkInput {
  /** The proofs of a backfill in lanes; without it, a first backfill is one walk. */
  backfills?: BackfillStore | undefined;
  /** Answers as text for a backfill store that parses them elsewhere (`fetchKeyRange`). Optional. */
  fetchKeyText?: FetchKeyText | undefined;
  /** RawIds a range. Default a hundred full answers' worth. */
  rangeWidth?: number | undefined;
  /** Checks of a backfill in lanes before it gives up. Default 5. */
  maxRounds?: number | undefined;
}

/** Lanes of a backfill without a size to follow (`lanes`). */
const DEFAULT_LANES = 2;

/** Heads below this many full answers are backfilled by the walk alone: lanes would not pay. */
const MIN_ANSWERS_FOR_LANES = 10;

/**
 * Syncs one stream by key: a first backfill of a long list (or one a killed run left) in lanes,
 * then the walk, which reads the rest. Returns the walk's result with the lanes' work added.
 */
export async function syncByKey(input: KeySyncInput): Promise<WalkResult> {
  const lanes = await backfillInLanes(input);
  if (lanes !== null && !lanes.finished) return lanes;
  // Right after the lanes, within their settling window: the tail reads what arrived since their
  // head, and the next run reads their unsettled span again; not a full walk, which would read
  // again what they have just proven.
  const walked = await walkByKey({
    ...input,
    full: lanes === null && input.full,
    fromWatermark: lanes !== null,
  });
  if (lanes === null) return walked;
  const counts = zeroCounts();
  addCounts(counts, lanes.counts);
  addCounts(counts, walked.counts);
  return {
    ...walked,
    mode: 'backfill',
    pages: lanes.pages + walked.pages,
    records: lanes.records + walked.records,
    counts,
  };
}

/**
 * The first backfill in lanes: plans a run (or takes over one a killed run left), walks the
 * stretches its proofs leave, checks, and walks again what a failed range left, until the check
 * moves the watermark to the run's head. `null` when the stream needs no backfill in lanes.
 */
async function backfillInLanes(input: KeySyncInput): Promise<WalkResult | null> {
  const { backfills, fetchKeyHead, spec, owner } = input;
  // `full` too: a stream never backfilled has nothing to walk again, and a first backfill a
  // killed run left must end (its run closed, the deferred indexes built), not be walked around.
  // A fixed single lane is a plain walk; a size read as it goes may grow, so it takes lanes.
  const oneLane = typeof input.lanes !== 'function' && (input.lanes ?? DEFAULT_LANES) < 2;
  if (!backfills || !fetchKeyHead || oneLane) return null;
  const key = streamKey(spec);
  const leaseMs = input.leaseMs ?? LEASE_MS.walk;
  const logger = input.logger ?? quietLogger;
  const width = input.rangeWidth ?? countOf(input) * KEY_REQUESTS_PER_RANGE;
  // A stream with a watermark or a walk is past its first backfill: a tail pays one look, not two
  // (a run in progress never leaves either behind).
  if (await backfills.streamStarted(key)) return null;
  const running = await backfills.runningRun(key);
  const session = await openStreamSession({
    store: input.store,
    spec,
    owner,
    leaseMs,
    signal: input.signal,
    logger,
  });
  let run: BackfillRun | null = running;
  try {
    if (!run && session.state.watermark === null && session.state.walk === null) {
      const minHead = (width / KEY_REQUESTS_PER_RANGE) * MIN_ANSWERS_FOR_LANES;
      run =
        (await planKeyBackfill({ store: backfills, fetchKeyHead, spec, id: randomUUID(), width, minHead }))
          ?.run ?? null;
    }
  } catch (error) {
    await session.end({ error });
    throw error;
  }
  if (!run) {
    await session.end({ finished: true });
    return null;
  }
  logger.info(
    { stream: key, backfill: run.id, head: run.headRawId, lanes: lanesNow(input)() },
    'backfill by key in lanes',
  );
  const result: WalkResult = {
    key,
    mode: 'backfill',
    pages: 0,
    records: 0,
    counts: zeroCounts(),
    refetched: 0,
    watermark: null,
    finished: false,
    dialect: 'key',
  };
  try {
    for (let round = run.round; ; round++) {
      const tasks = await pendingKeyTasks(
        backfills,
        key,
        run.headRawId,
        laneWidth(input, run.headRawId, width),
      );
      await walkRanges({ input, run, tasks, session, result });
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
        pageRepairs: false,
        logger,
      });
      if (outcome.status === 'done') {
        result.watermark = outcome.watermark;
        result.finished = true;
        return result;
      }
      if (outcome.status === 'failed')
        throw new MalformedResponseError(
          `stream ${key} by key`,
          `${outcome.gaps.length} stretch(es) below rawId ${run.headRawId} still unproven after ${round + 1} rounds`,
          '',
        );
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
 * The width of the ranges a backfill plans: `width`, or narrower, so that a short list still has
 * a range for every lane from the start (rather than gaining its lanes split by split, one answer
 * apart), in whole answers and never under four of them.
 */
function laneWidth(input: Pick<KeySyncInput, 'lanes' | 'count'>, head: number, width: number): number {
  const count = countOf(input);
  const even = Math.ceil(head / lanesNow(input)() / count) * count;
  return Math.max(4 * count, Math.min(width, even));
}

/** Records asked a request: `input.count`, else the service's own clients' hundred. */
function countOf(input: Pick<KeySyncInput, 'count'>): number {
  return input.count ?? 100;
}

/**
 * The answers' text all lanes hold at most, their batches filling and committing together: what
 * they hold stays flat however many lanes the budget and the distance call for. Each lane holds
 * two batches (one committing while the next fills), so a lane's batch is full at its share of
 * half of it: at 3 lanes past the sixteen answers a commit takes anyway, at 26 lanes (a budget of
 * 100 a second 200 ms away) about six answers of a hundred records.
 */
export const LANES_HELD_BYTES = 32 * 1024 * 1024;

/** The most bytes of answers in one lane's batch while `lanes` lanes walk: see {@link LANES_HELD_BYTES}. */
export function laneBatchBytes(lanes: number): number {
  return Math.floor(LANES_HELD_BYTES / (2 * Math.max(1, lanes)));
}

/** How many lanes the backfill wants now: `input.lanes` read as it goes. */
function lanesNow(input: Pick<KeySyncInput, 'lanes'>): () => number {
  return lanesOf(input.lanes, DEFAULT_LANES);
}

/**
 * Walks the ranges in as many lanes as `input.lanes` says, each lane taking the next range once
 * its own is done. After each commit, lanes are added up to the size; a lane above it ends once
 * its range is done. The first failure stops the other lanes (after they commit what they read)
 * and is thrown.
 */
async function walkRanges(args: {
  input: KeySyncInput;
  run: BackfillRun;
  tasks: KeyRangeTask[];
  session: StreamSession;
  result: WalkResult;
}): Promise<void> {
  const { input, run, result, session } = args;
  const queue = [...args.tasks];
  const stop = new AbortController();
  const signal = input.signal ? AbortSignal.any([input.signal, stop.signal]) : stop.signal;
  const wanted = lanesNow(input);
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
  // Near the end no range is left to start: a range under way gives its upper half to a new lane,
  // cut a whole number of answers above its cursor (without holes, its last answer ends there).
  const count = countOf(input);
  const split = ({ cursor, upTo }: { cursor: number; upTo: number }): number | null => {
    if (signal.aborted || queue.length > 0 || active >= wanted() || upTo - cursor < 4 * count) return null;
    const cut = cursor + count * Math.floor((upTo - cursor) / (2 * count));
    queue.push({ after: cut, upTo });
    topUp();
    return cut;
  };
  const lane = async (): Promise<void> => {
    try {
      for (let task = queue.shift(); task !== undefined && !signal.aborted; task = queue.shift()) {
        await walkRange(task);
        // More lanes than the size wants: this one ends (the others take the ranges left).
        if (active > wanted()) return;
      }
    } finally {
      active--;
    }
  };
  const walkRange = async (task: KeyRangeTask): Promise<void> => {
    await fetchKeyRange({
      store: args.input.backfills!,
      fetchKeyPage: input.fetchKeyPage,
      fetchKeyText: input.fetchKeyText,
      spec: input.spec,
      backfillId: run.id,
      task,
      count: input.count,
      split,
      batchBytes: () => laneBatchBytes(active),
      signal,
      logger: input.logger,
      settle: { headAt: run.headAt, windowMs: input.settleMs ?? SETTLE_MS },
      now: input.now,
      onCommit: async ({ answers, records, counts }) => {
        result.pages += answers;
        result.records += records;
        addCounts(result.counts, counts);
        input.onPage?.({
          key: result.key,
          mode: 'backfill',
          page: result.pages,
          pages: answers,
          totalPages: 0,
          records,
          counts,
        });
        // Range commits carry no fence: nothing to wait for before a renewal.
        await session.renew();
        topUp();
      },
    });
  };
  topUp();
  while (running.size > 0) await Promise.race(running);
  if (failure !== null && !input.signal?.aborted)
    throw stop.signal.reason ?? (failure as { reason: unknown }).reason;
}
