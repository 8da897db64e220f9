/**
 * A stream walked by key, the dialect the deployed service and its own clients speak: ascending
 * from a cursor, each answer's last rawId the next cursor. Backfill and tail are one walk: a
 * backfill starts at the bottom, a tail at the stream's settled mark (below its watermark, so
 * records shown late are read again). Consecutive cursors leave no room for a missing record,
 * so nothing is counted, compared or bisected; a server that answers fewer records than asked
 * (a silent cap) is simply followed from the last rawId it gave.
 */

import { COMMIT_SIZES, LEASE_MS, SETTLE_MS } from '../../defaults.js';
import { isKeyCheckpoint, type KeyCheckpoint, type WalkCheckpoint } from '../../domain/checkpoints.js';
import type { LedgerTx, RejectedRecord } from '../../domain/model.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { type CommitPipeline, createCommitPipeline, recordBytes } from '../commit-pipeline.js';
import { createKeySource, readKeyAfter } from '../key-source.js';
import type { FetchKeyPage } from '../ports/fetches.js';
import type { SettleState, SyncStore } from '../ports/sync-store.js';
import type { RangeEdges } from '../range-edges.js';
import { keyWalkScreen } from '../raw-id-screen.js';
import { gapFloor, settleAfterWalk, tailStop } from '../settle.js';
import { openStreamSession, type StreamSession } from '../stream-session.js';
import { quietLogger, type SyncLogger } from '../sync-logger.js';
import { addCounts } from '../write-counts.js';
import { type KeyHead, readKeyHead } from './key-head.js';
import { emptyWalkResult, type PageEvent, type WalkResult } from './walk-types.js';

/** What {@link walkByKey} needs. */
export interface KeyWalkInput {
  store: SyncStore;
  fetchKeyPage: FetchKeyPage;
  spec: StreamSpec;
  /** Who holds the lease while the walk runs. */
  owner: string;
  /** Lease length; renewed while the walk goes on. Default 120000. */
  leaseMs?: number | undefined;
  /** Records asked per request (the server may answer fewer). Default: the fetch's own. */
  count?: number | undefined;
  /** Start a new backfill from the bottom even when the stream is complete or mid-walk. */
  full?: boolean | undefined;
  /**
   * A tail reads from the watermark, not the settled mark, and leaves the settled mark where it
   * is: right after a backfill in lanes, whose unsettled span a tail a window later reads again.
   */
  fromWatermark?: boolean | undefined;
  /** The settling window, ms (see `settle.ts`). Default 3000. */
  settleMs?: number | undefined;
  /**
   * A tail begins with the newest records, newest first (see `key-head.ts`): the same one request
   * when they reach down to the settled mark, and it re-reads the records waiting for a status
   * change near the head. Not with `fromWatermark`: the tail right after a backfill in lanes
   * reads only what arrived since. Default false: ascending from the settled mark.
   */
  headFirst?: boolean | undefined;
  /**
   * A tail begun at the head (`headFirst`) whose head answer shows more than this many answers'
   * worth of rawIds above where it starts (each as wide as the head answer) commits nothing: it
   * ends at once with `behind`, for its caller to read the stretch in lanes (`key-sync.ts`).
   * Default: a tail reads any stretch itself.
   */
  handOverAnswers?: number | undefined;
  /** Most answers committed in one transaction (those that arrived while a commit ran). Default `COMMIT_SIZES.keyWalkAnswers`. */
  pagesPerCommit?: number | undefined;
  /** How often an empty answer that says more follow is asked again before the walk fails. Default `EMPTY_ANSWER_RETRY`. */
  emptyPageRetries?: number | undefined;
  /** Pause before asking an empty answer again, doubled each time. Default `EMPTY_ANSWER_RETRY`. */
  emptyPageDelayMs?: number | undefined;
  /** Once aborted, the walk stops after the answer in flight, its records committed. */
  signal?: AbortSignal | undefined;
  /** The keyless records where the ranges of a run in lanes meet, the walk after them on top (`range-edges.ts`). */
  edges?: RangeEdges | undefined;
  /** Called after each commit (progress bars, metrics): `page` counts requests, `totalPages` is 0. */
  onPage?: ((event: PageEvent) => void) | undefined;
  logger?: SyncLogger | undefined;
  now?: (() => number) | undefined;
}

/** One answer accepted, waiting for its commit. */
interface KeyAnswer {
  /** Its place in the walk's requests (1 first): the page number rejected records are filed under. */
  index: number;
  records: LedgerTx[];
  rejected: RejectedRecord[];
  /** The checkpoint after it; `null` when the walk ends with it. */
  walk: KeyCheckpoint | null;
  /** The lowest rawId missing from what the walk read so far that may still fill in. */
  openGap: number | undefined;
  /** Records set aside that a range below counted already (`KeyStep.repeats`). */
  repeats: number;
}

/**
 * Walks one stream by key: takes its lease, reads from where it stands (a walk in progress, else
 * the settled mark, else the bottom) to the newest record, and commits the answers in order, each
 * commit checking that the checkpoint it follows on from is stored. The last commit moves the
 * watermark to the newest rawId read and stores the settling state; it waits for the disk.
 */
export async function walkByKey(input: KeyWalkInput): Promise<WalkResult> {
  const { store, spec, owner } = input;
  const leaseMs = input.leaseMs ?? LEASE_MS.walk;
  const logger = input.logger ?? quietLogger;
  const now = input.now ?? Date.now;
  const windowMs = input.settleMs ?? SETTLE_MS;
  const startedAt = now();
  const session = await openStreamSession({ store, spec, owner, leaseMs, signal: input.signal, logger, now });
  const { key, watermark } = session.state;
  const { stored, mode, from, settles } = walkStart(session.state, input);
  const run: KeyRun = {
    session,
    // What the stored checkpoint holds, even when this walk does not continue it (`full`): the
    // first commit follows on from it.
    committedCursor: session.state.walk?.cursor ?? null,
    // A backfill reads ascending to the newest record (resumed, from its cursor, a rawId read
    // before), so what it read last is the head: its watermark, whatever was stored (a --full run
    // repairs one a phantom record once moved). A tail may read nothing above the stored
    // watermark: it keeps it.
    highest: mode === 'backfill' ? (stored?.cursor ?? -1) : (watermark ?? -1),
    headAt: undefined,
    result: emptyWalkResult(key, mode, 'key', watermark),
  };
  logger.info({ stream: key, mode, dialect: 'key', cursor: from, watermark }, 'walk starts');
  const fresh = stored === null;
  const settle = session.state.settle;
  const settling = {
    state: { ...settle, watermark },
    mode,
    fromPageOne: fresh && settles,
    startedAt,
    windowMs,
  };
  const finish = (openGap: number | undefined): SettleState =>
    settleAfterWalk({
      ...settling,
      settledBelow: !settles ? null : openGap === undefined ? Number.POSITIVE_INFINITY : openGap - 1,
      watermark: run.highest,
      headAt: run.headAt,
      now: now(),
    });
  const pipeline = keyCommits({ input, run, watermark, finish, now });
  const reader = createKeyReader({
    input,
    mode,
    from,
    windowMs,
    // Gaps at or below a waiting head this walk settles do not hold the settled mark back.
    floor: gapFloor(settling),
    openGap: stored?.openGap,
    head: input.headFirst === true && mode === 'tail' && fresh && settles ? { watermark } : null,
    now,
  });
  try {
    for (;;) {
      const answer = await reader.next();
      if ('head' in answer) {
        run.result.behind = { head: answer.head, from, gapFloor: gapFloor(settling) };
        break;
      }
      for (const tx of answer.records) run.highest = Math.max(run.highest, tx.rawId);
      if (answer.walk === null) run.headAt = reader.headAt();
      pipeline.add(answer);
      const last = answer.walk === null;
      if (last || pipeline.full() || input.signal?.aborted) await pipeline.submit();
      // Else committed as soon as the running commit ends, with whatever arrived meanwhile; a
      // failure is thrown by the next submit or flush.
      else pipeline.submit().catch(() => {});
      if (last || input.signal?.aborted) break;
      await session.renew(() => pipeline.settled());
    }
    await pipeline.flush();
    run.result.finished = run.committedCursor === null && run.result.pages > 0;
  } catch (error) {
    await pipeline.settled().catch(() => {});
    await session.end({ error });
    throw error;
  }
  await session.end({ finished: run.result.finished });
  return logWalkEnd(run.result, logger);
}

/** Logs what a walk that finished, was stopped or handed over did. */
function logWalkEnd(result: WalkResult, logger: SyncLogger): WalkResult {
  const { key: stream, mode, pages, records, watermark, finished, behind } = result;
  if (behind !== undefined) {
    logger.info({ stream, mode, dialect: 'key', ...behind }, 'walk hands over: the head is far');
    return result;
  }
  logger.info(
    { stream, mode, dialect: 'key', pages, records, watermark, finished },
    finished ? 'walk finished' : 'walk stopped',
  );
  return result;
}

/**
 * Where a walk by key begins: a walk in progress at its cursor; else a backfill at the bottom, or
 * a tail at the settled mark (at the watermark with `fromWatermark`, then settling nothing below).
 */
function walkStart(
  state: Awaited<ReturnType<SyncStore['acquireStream']>>['state'],
  input: Pick<KeyWalkInput, 'full' | 'fromWatermark'>,
): { stored: KeyCheckpoint | null; mode: WalkCheckpoint['mode']; from: number; settles: boolean } {
  const { watermark } = state;
  const stored = state.walk === null || !isKeyCheckpoint(state.walk) || input.full ? null : state.walk;
  const mode: WalkCheckpoint['mode'] =
    stored?.mode ?? (input.full || watermark === null ? 'backfill' : 'tail');
  const tailFrom = input.fromWatermark ? watermark : tailStop({ watermark, settled: state.settle.settled });
  const from = stored?.cursor ?? (mode === 'backfill' ? 0 : Math.max(0, tailFrom ?? 0));
  // A tail from the watermark read nothing of the span below it: it settles none of it.
  return { stored, mode, from, settles: !(input.fromWatermark && mode === 'tail') };
}

/** What one walk by key carries from answer to answer. */
interface KeyRun {
  /** The stream's lease: each commit writes under the one held now. */
  session: StreamSession;
  /** The cursor of the stored checkpoint: the next commit follows on from it (`null`: none stored). */
  committedCursor: number | null;
  /** The newest rawId read so far: the watermark the walk ends with. */
  highest: number;
  /** When the newest records were read (the walk's head). */
  headAt: number | undefined;
  result: WalkResult;
}

/**
 * The commits of a walk by key: the answers that arrived while a commit ran go in the next one,
 * in order; each checks that the checkpoint it follows on from is stored, and the last moves the
 * watermark and stores the settling state, waiting for the disk.
 */
function keyCommits(input: {
  input: KeyWalkInput;
  run: KeyRun;
  watermark: number | null;
  finish: (openGap: number | undefined) => SettleState;
  now: () => number;
}): CommitPipeline<KeyAnswer> {
  const { run, watermark } = input;
  const { store, onPage } = input.input;
  return createCommitPipeline<KeyAnswer>({
    maxPages: Math.max(1, input.input.pagesPerCommit ?? COMMIT_SIZES.keyWalkAnswers),
    sizeOf: (answer) => recordBytes(answer.records),
    lingerMs: 0,
    now: input.now,
    commit: async (answers) => {
      const last = answers[answers.length - 1]!;
      const ends = last.walk === null;
      // Records, not sightings: an answer may list again a record the one before listed.
      const records = new Set(answers.flatMap((a) => a.records.map((tx) => tx.rawId))).size;
      const counts = await store.commitPage({
        lease: run.session.lease(),
        fromCursor: run.committedCursor,
        pages: answers.map((a) => ({ page: a.index, records: a.records })),
        rejected: answers.flatMap((a) => a.rejected),
        walk: last.walk,
        watermark: ends ? run.highest : watermark,
        durable: ends,
        settle: ends ? input.finish(last.openGap) : undefined,
      });
      // Stored by the range below too (one row, seen twice), counted once.
      counts.rejected -= answers.reduce((n, a) => n + a.repeats, 0);
      run.committedCursor = last.walk?.cursor ?? null;
      const { result } = run;
      if (ends) result.watermark = run.highest;
      result.pages += answers.length;
      result.records += records;
      addCounts(result.counts, counts);
      const { key, mode } = result;
      onPage?.({
        key,
        mode,
        page: last.index,
        pages: answers.length,
        totalPages: 0,
        records,
        counts,
      });
    },
  });
}

/**
 * The head to hand over to: the newest rawId of a head answer that lies more than `answers` of its
 * own widths past `from` (the stretch's density as the newest records show it; holes are fine).
 */
function handOver(read: KeyHead, from: number, answers: number | undefined): number | null {
  if (read.join === null || answers === undefined) return null;
  const newest = Math.max(...read.records.map((tx) => tx.rawId));
  const width = newest - read.join + 1;
  return (newest - from) / width > answers ? newest : null;
}

/**
 * Reads a stream's answers one after the other, each from the last rawId of the one before;
 * with `head`, the newest records first, and then ascending only up to where they begin.
 */
function createKeyReader(input: {
  input: KeyWalkInput;
  mode: WalkCheckpoint['mode'];
  from: number;
  windowMs: number;
  /** Gaps at or below it have settled (see `gapFloor`). */
  floor: number | null;
  openGap: number | undefined;
  /** Read the head first (a tail begun afresh), knowing the stored watermark. */
  head: { watermark: number | null } | null;
  now: () => number;
}) {
  const { mode, windowMs, floor, now } = input;
  const walkInput = input.input;
  const { fetchKeyPage, spec, count } = walkInput;
  const screen = keyWalkScreen({ fetchKeyPage, spec, logger: walkInput.logger ?? quietLogger });
  let cursor = input.from;
  let index = 0;
  let openGap = input.openGap;
  let readAt = now();
  let head = input.head;
  /** When the head answer was read; the ascending reads end once they reach its lowest rawId. */
  let headReadAt: number | undefined;
  let join: number | null = null;
  const reading = {
    fetchKeyPage,
    screen,
    spec,
    count,
    emptyRetries: walkInput.emptyPageRetries,
    emptyDelayMs: walkInput.emptyPageDelayMs,
    signal: walkInput.signal,
  };
  // The open top range: ascending from the cursor to the end of the list, one answer at a time (a
  // stretch far below the head is a run's, read in lanes: `handOverAnswers`).
  const source = createKeySource({
    task: { after: input.from, upTo: Number.POSITIVE_INFINITY },
    read: async (after, upTo) => {
      const at = now();
      const served = await readKeyAfter(reading, after ?? 0, upTo);
      readAt = Math.max(readAt, at);
      return { served, readAt: at };
    },
    settle: { windowMs, headAt: undefined, floor },
    edges: walkInput.edges,
  });
  const checkpoint = (): KeyCheckpoint => ({
    mode,
    cursor,
    ...(openGap === undefined ? {} : { openGap }),
  });
  return {
    /** When the newest records were read: the head answer, else the last answer. */
    headAt: () => headReadAt ?? readAt,
    /** The next answer; or, where a tail hands a far stretch over (`handOverAnswers`), the head it saw. */
    async next(): Promise<KeyAnswer | { head: number }> {
      if (head !== null) {
        const { watermark } = head;
        head = null;
        index++;
        const heading = { fetchKeyPage, screen, spec, count, from: cursor, watermark, windowMs, floor, now };
        const read = await readKeyHead(heading);
        headReadAt = read.readAt;
        const far = handOver(read, cursor, walkInput.handOverAnswers);
        if (far !== null) return { head: far };
        if (read.openGap !== undefined) openGap = Math.min(openGap ?? read.openGap, read.openGap);
        join = read.join;
        const { records, rejected } = read;
        return { index, records, rejected, walk: read.reaches ? null : checkpoint(), openGap, repeats: 0 };
      }
      const step = await source.next();
      index++;
      if (step.openGap !== null) openGap = Math.min(openGap ?? step.openGap, step.openGap);
      if (step.last !== null) cursor = step.last;
      const ends = step.ends || (join !== null && cursor >= join);
      return {
        index,
        records: step.read.served.txs,
        rejected: step.rejected,
        walk: ends ? null : checkpoint(),
        openGap,
        repeats: step.repeats,
      };
    },
  };
}
