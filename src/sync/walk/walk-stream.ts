import { COMMIT_SIZES, EMPTY_ANSWER_RETRY, LEASE_MS, SETTLE_MS } from '../../defaults.js';
import { asPageCheckpoint, type PageCheckpoint } from '../../domain/checkpoints.js';
import type { TxPage } from '../../domain/model.js';
import { pageRawIds, sameIds } from '../../domain/page-links.js';
import { isGlobalList } from '../../domain/stream-key.js';
import { LeaseLostError, MalformedResponseError } from '../../errors.js';
import type { SettleState, StoredGap, StreamState } from '../ports/sync-store.js';
import { screenPages } from '../raw-id-screen.js';
import {
  createSettleTracker,
  gapFloor,
  promotedHead,
  type SettleTracker,
  settleAfterWalk,
  settleMarks,
  tailReadsToMark,
  tailStop,
} from '../settle.js';
import { openStreamSession, type StreamSession } from '../stream-session.js';
import { delay, errorText, quietLogger, type SyncLogger } from '../sync-logger.js';
import { addCounts } from '../write-counts.js';
import { MAX_GAP_PAGES, proveGaps } from './gap-proof.js';
import { judgePage } from './judge-page.js';
import { createPageWindow, type PageWindow } from './page-window.js';
import { createWalkCommits, type WalkCommits } from './walk-commits.js';
import { afterPage, requestBounds, startCursor, type WalkCursor } from './walk-cursor.js';
import { emptyWalkResult, type WalkResult, type WalkStreamInput } from './walk-types.js';

const DEFAULTS = {
  leaseMs: LEASE_MS.walk,
  settleMs: SETTLE_MS,
  concurrency: 4,
  pagesPerCommit: COMMIT_SIZES.pages,
  commitLingerMs: 200,
  emptyPageRetries: EMPTY_ANSWER_RETRY.retries,
  emptyPageDelayMs: EMPTY_ANSWER_RETRY.delayMs,
};

/** One walk under way: what its steps share. */
interface WalkRun {
  input: WalkStreamInput;
  /** The walk's lease: its commits and its gap check write under the one held now. */
  session: StreamSession;
  logger: SyncLogger;
  result: WalkResult;
  cursor: WalkCursor;
  window: PageWindow;
  commits: WalkCommits;
  /** Where a tail stops reading: the stream's settled mark (see `settle.ts`). */
  stop: number | null;
  settle: SettleTracker;
  now: () => number;
  /**
   * With a gap check to make after the walk: what it needs from the pages accepted. Records (and
   * records set aside) above the watermark the walk began with, and the pages themselves, up to
   * {@link MAX_SEEN_PAGES} (they may show gaps closed).
   */
  forGaps: { from: number; newRecords: number; seen: TxPage[] } | null;
}

/** Most pages of a walk kept for its gap check: a tail with a gap check reads only what is new. */
const MAX_SEEN_PAGES = 16;

/**
 * Walks one stream: takes its lease, then backfills (pages 1..totalPages, resuming from the
 * checkpoint) or tails (page 1 down to the watermark) according to its state, committing each
 * page with the next checkpoint in one transaction, in ascending page order. Pages are fetched
 * a few at a time; a page fetched before its predecessor is accepted only when its rawIds prove
 * nothing slipped between the two (see {@link judgePage}), and fetched again otherwise.
 *
 * Fails (checkpoint intact, lease released with the error) when a fetch fails after the client's
 * retries, or a page before `totalPages` stays empty.
 */
export async function walkStream(input: WalkStreamInput): Promise<WalkResult> {
  // Every page screened (see `raw-id-screen.ts`): a record the service does not vouch for moves nothing.
  return walkScreened({ ...input, fetchPage: screenPages(input.fetchPage, input.logger ?? quietLogger) });
}

/** {@link walkStream} over pages screened already. */
async function walkScreened(input: WalkStreamInput): Promise<WalkResult> {
  const { result, proof } = await walkOnce(input);
  if (proof !== 'unproven' || input.signal?.aborted) return result;
  // The pages did not show every gap closed: the span is read whole, as without the check.
  try {
    return mergedResults(result, await walkScreened({ ...input, readToMark: true }));
  } catch (error) {
    // Another runner took the stream in between: the span is its to read.
    if (error instanceof LeaseLostError) return result;
    throw error;
  }
}

/** One walk under its lease, and how its gap check (if it had one) ended. */
async function walkOnce(input: WalkStreamInput): Promise<{ result: WalkResult; proof: GapProof }> {
  const { store, spec, owner } = input;
  const leaseMs = input.leaseMs ?? DEFAULTS.leaseMs;
  const logger = input.logger ?? quietLogger;
  const now = input.now ?? Date.now;
  const session = await openStreamSession({ store, spec, owner, leaseMs, signal: input.signal, logger, now });
  const { key, watermark } = session.state;
  const cursor = startCursor(session.state, input.full ?? false);
  const { walk } = cursor;
  const asked = input.concurrency ?? DEFAULTS.concurrency;
  const widthNow = typeof asked === 'function' ? asked : () => asked;
  // The widest the window can get: pages' read times are judged by it (see `settle.ts`).
  const width = Math.max(1, input.maxConcurrency ?? widthNow());
  const plan = await settlePlan({ input, state: session.state, walk, width, now });
  const { stop, settle } = plan;
  const result = emptyWalkResult(key, walk.mode, 'page', watermark);
  logger.info(
    { stream: key, mode: walk.mode, next_page: walk.nextPage, watermark, stop, total_pages: walk.totalPages },
    'walk starts',
  );
  const commits = createWalkCommits({
    store,
    session,
    result,
    onPage: input.onPage,
    maxPages: Math.max(1, input.pagesPerCommit ?? DEFAULTS.pagesPerCommit),
    lingerMs: input.commitLingerMs ?? DEFAULTS.commitLingerMs,
    settle: plan.settleAtEnd,
    storedNextPage: asPageCheckpoint(session.state.walk)?.nextPage,
    now,
  });
  const window = createPageWindow({
    fetchPage: (page) => input.fetchPage(spec, page),
    maxWidth: () => Math.min(width, widthNow()),
    bounds: () => requestBounds(run.cursor, stop),
  });
  const run: WalkRun = {
    input,
    session,
    logger,
    result,
    cursor,
    window,
    commits,
    stop,
    settle,
    now,
    forGaps:
      plan.gapCheck !== null && watermark !== null ? { from: watermark, newRecords: 0, seen: [] } : null,
  };
  let proof: GapProof = 'none';
  try {
    await walkBatches(run);
    const { gapCheck } = plan;
    if (gapCheck !== null && run.forGaps !== null && result.finished)
      proof = await checkGaps(run, { ...gapCheck, ...run.forGaps }, () =>
        plan.settleProven(result.watermark),
      );
  } catch (error) {
    await commits.pipeline.settled().catch(() => {});
    await session.end({ error });
    throw error;
  } finally {
    window.close();
  }
  await session.end({ finished: result.finished });
  logger.info(walkSummary(result), result.finished ? 'walk finished' : 'walk stopped');
  return { result, proof };
}

/** How a walk's gap check ended: none made, every gap shown closed, or not. */
type GapProof = 'none' | 'proven' | 'unproven';

/**
 * Where a walk stops and how it settles: a tail reads down to the settled mark only when a
 * waiting head is a window old and its gaps cannot be checked by the pages that show them.
 */
async function settlePlan(input: {
  input: WalkStreamInput;
  state: StreamState;
  walk: PageCheckpoint;
  width: number;
  now: () => number;
}) {
  const { state, walk, now } = input;
  const settleMs = input.input.settleMs ?? DEFAULTS.settleMs;
  const startedAt = now();
  const fromPageOne = walk.nextPage === 1;
  const ripe = { state: state.settle, fromPageOne, startedAt, windowMs: settleMs };
  // A ripe head's span settled by the pages that show its gaps, when the store can tell them.
  const gapCheck =
    walk.mode === 'tail' && input.input.readToMark !== true
      ? await plannedGapCheck(input.input, state, ripe)
      : null;
  // While no waiting head is a window old, a tail stops at its watermark: the span below waits.
  const toMark = walk.mode === 'backfill' || (gapCheck === null && tailReadsToMark(ripe));
  const stop = toMark
    ? tailStop({ watermark: state.watermark, settled: state.settle.settled })
    : state.watermark;
  const settle = createSettleTracker({
    windowMs: settleMs,
    width: input.width,
    firstPage: walk.nextPage,
    startedAt,
    headAt: walk.headAt,
    floor: gapFloor({
      state: { ...state.settle, watermark: state.watermark },
      mode: walk.mode,
      fromPageOne,
      startedAt,
      windowMs: settleMs,
    }),
  });
  const ends = { state, walk, settle, settleMs, startedAt, now };
  return {
    gapCheck,
    stop,
    settle,
    // With a gap check to come, the walk's own commit promotes no head: the check has not read yet.
    settleAtEnd: settleEnd({ ...ends, read: toMark ? 'to-mark' : 'new' }),
    /** The state once the gap check showed every gap closed. */
    settleProven: (watermark: number | null) =>
      settleEnd({ ...ends, read: gapCheck?.headsAbove ? 'new' : 'gaps-proven', promote: true })(watermark),
  };
}

/** A ripe head's span to settle by its gaps: the stored gaps below the head, and what they need. */
interface GapCheck {
  gaps: StoredGap[];
  /** Heads wait above the ripe one: the span above it is not settled by this run. */
  headsAbove: boolean;
}

/**
 * The gap check of a tail of the global list from page 1 begun when a waiting head is a window
 * old: the gaps the store holds between the settled mark and that head. `null` when there is
 * none to do (no head is ripe, another list, a store that cannot tell, too many gaps).
 */
async function plannedGapCheck(
  input: WalkStreamInput,
  state: StreamState,
  ripe: Parameters<typeof promotedHead>[0],
): Promise<GapCheck | null> {
  const head = promotedHead(ripe);
  const { settled } = state.settle;
  if (head === null || settled === null || state.watermark === null || !isGlobalList(input.spec)) return null;
  const gaps = await input.store.storedGaps({
    above: settled,
    upTo: head,
    rankUpTo: state.watermark,
    limit: MAX_GAP_PAGES,
  });
  if (gaps === null) return null;
  const waiting = [state.settle.pending, ...(state.settle.later ?? [])];
  return { gaps, headsAbove: waiting.some((h) => h !== null && h.rawId > head) };
}

/**
 * Reads the pages that show the planned gaps and, when every gap shows closed, stores the
 * settling state that settles the ripe head (`settled`), with the walk's watermark.
 */
async function checkGaps(
  run: WalkRun,
  check: GapCheck & { newRecords: number; seen: TxPage[] },
  settled: () => SettleState,
): Promise<'proven' | 'unproven'> {
  const { input, logger, result } = run;
  const { proven, read } = await proveGaps({
    gaps: check.gaps,
    newRecords: check.newRecords,
    seen: check.seen,
    fetchPage: (page) => input.fetchPage(input.spec, page),
  });
  logger.debug(
    { stream: result.key, gaps: check.gaps.length, pages: read.length, proven },
    'gaps below the head read',
  );
  if (!proven || result.watermark === null) return 'unproven';
  try {
    // One commit: the pages' records (any shown late in a gap, the rest as fresh as a re-read's)
    // with the state that settles the head; durable, as a walk's last commit.
    const counts = await input.store.commitPage({
      lease: run.session.lease(),
      pages: read.map(({ page, served }) => ({ page, records: served.txs })),
      rejected: [],
      walk: null,
      watermark: result.watermark,
      settle: settled(),
      durable: true,
    });
    addCounts(result.counts, counts);
  } catch (error) {
    // The walk's own commits stand; its head keeps waiting, and a later tail settles it.
    logger.warn({ stream: result.key, err: errorText(error) }, 'could not store the gaps read closed');
  }
  return 'proven';
}

/** A walk and the walk after it, as one call's result. */
function mergedResults(first: WalkResult, second: WalkResult): WalkResult {
  const counts = { ...first.counts };
  addCounts(counts, second.counts);
  return {
    ...second,
    headPages: second.headPages ?? second.pages,
    pages: first.pages + second.pages,
    records: first.records + second.records,
    refetched: first.refetched + second.refetched,
    counts,
  };
}

/** Accepts and commits batch after batch until the walk ends, stops, or fails. */
async function walkBatches(run: WalkRun): Promise<void> {
  const { input, result, window, commits } = run;
  const { pipeline } = commits;
  for (;;) {
    const { finished, failure } = await gatherBatch(run);
    const pagesQueued = pipeline.queued > 0;
    // Keep the next pages coming while the previous commit ends and this one runs.
    if (!finished && !failure && pagesQueued) window.fill();
    // The commit runs while the next pages are accepted; it ends before the next one starts.
    await pipeline.submit();
    if (!pagesQueued) throw failure?.error;
    if (failure || finished || input.signal?.aborted) await pipeline.settled();
    if (failure) throw failure.error;
    if (finished) {
      result.finished = true;
      return;
    }
    if (input.signal?.aborted) return;
    await commits.renewLease();
  }
}

/**
 * Accepts the pages already fetched in a row and queues them for one commit: one transaction
 * for several pages keeps the database from being the bottleneck. A failed page ends the batch
 * with the pages before it kept; its failure surfaces after they are committed.
 */
async function gatherBatch(run: WalkRun): Promise<{ finished: boolean; failure: { error: unknown } | null }> {
  const { input, window } = run;
  const { pipeline } = run.commits;
  pipeline.openBatch();
  for (;;) {
    const page = run.cursor.walk.nextPage;
    window.fill();
    let served: TxPage;
    try {
      served = await acceptPage(run, page);
    } catch (error) {
      return { finished: false, failure: { error } };
    }
    const next = afterPage(run.cursor, page, served, run.stop);
    const marks = settleMarks(served);
    run.settle.accepted(page, marks, run.now());
    const gaps = run.forGaps;
    if (gaps !== null) {
      gaps.newRecords += marks.filter((mark) => mark.rawId > gaps.from).length;
      if (gaps.seen.length < MAX_SEEN_PAGES) gaps.seen.push(served);
    }
    const headAt = run.settle.headAt();
    if (next.cursor.walk.headAt === undefined && headAt !== undefined) next.cursor.walk.headAt = headAt;
    run.cursor = next.cursor;
    const { finished } = next;
    pipeline.add({ page, served, walk: run.cursor.walk, finished });
    window.accepted();
    // Rejected records are reported with their page: such a page ends the batch.
    if (finished || pipeline.full() || served.rejected.length > 0 || input.signal?.aborted)
      return { finished, failure: null };
    // Wait a little for pages already on their way rather than commit a lone page: fewer,
    // larger transactions.
    const ahead = window.state(page + 1);
    if (ahead === 'absent' || (ahead === 'pending' && pipeline.lingered()))
      return { finished, failure: null };
  }
}

/** Waits for a page and judges it: fetches an empty or unproven page again, throws a failed fetch. */
async function acceptPage(run: WalkRun, page: number): Promise<TxPage> {
  const { input, window, logger, result } = run;
  const stream = result.key;
  let fetched = await window.take(page);
  let emptyTries = 0;
  /** The rawIds of the copy whose link was unproven, once the page is being fetched again. */
  let unprovenIds: number[] | null = null;
  for (;;) {
    if (!fetched.outcome.ok) throw fetched.outcome.error;
    const served = fetched.outcome.value;
    const { walk, previousMin } = run.cursor;
    const judged = judgePage({
      page,
      served,
      ordered: fetched.ordered,
      totalPages: walk.totalPages,
      previousMin,
    });
    if (judged.link !== null) window.recordLink(judged.link !== 'unproven');
    if (judged.verdict === 'accept') {
      const ids = unprovenIds && pageRawIds(served);
      // The same records again: nothing moved, the gap was a hole in the rawIds, and the pages
      // ahead are as good as they were. Otherwise the list shifted under them.
      if (ids && !sameIds(unprovenIds, ids))
        window.dropUnprovenAhead(page, ids.length > 0 ? Math.min(...ids) : null);
      return served;
    }
    if (judged.verdict === 'empty-retry') {
      if (emptyTries >= (input.emptyPageRetries ?? DEFAULTS.emptyPageRetries)) {
        const problem = `page is empty although the list has ${judged.totalPages} pages`;
        throw new MalformedResponseError(`stream ${stream} page ${page}`, problem, '');
      }
      logger.warn(
        { stream, page, attempt: emptyTries + 1 },
        'empty page before the last one, fetching again',
      );
      await delay((input.emptyPageDelayMs ?? DEFAULTS.emptyPageDelayMs) * 2 ** emptyTries, input.signal);
      emptyTries++;
    } else {
      // Fetched again now that its predecessor is in, the page cannot have skipped anything.
      // The pages ahead stay in flight: a hole in the rawIds explains most unproven links, and
      // then they still continue this page; they are judged once it is back.
      result.refetched++;
      unprovenIds = pageRawIds(served);
      logger.debug({ stream, page }, 'page link unproven, fetching again');
    }
    window.fill();
    fetched = await window.take(page);
  }
}

/** The stream's settling state once the walk ends with `watermark`, from what its run read. */
function settleEnd(input: {
  state: StreamState;
  walk: { mode: 'backfill' | 'tail'; nextPage: number };
  settle: SettleTracker;
  /**
   * What the walk read: down to the settled mark (`to-mark`); only what is new (`new`), the span
   * below its watermark keeping its waiting heads; or what is new and pages that showed every
   * gap of the span below the ripe head closed, with no head waiting above it (`gaps-proven`).
   */
  read: 'to-mark' | 'new' | 'gaps-proven';
  /** A head a window old settles (the walk read the span or proved its gaps). Default: when `to-mark`. */
  promote?: boolean;
  settleMs: number;
  startedAt: number;
  now: () => number;
}): (watermark: number | null) => SettleState {
  const { state, walk, settle, read } = input;
  const promote = input.promote ?? read === 'to-mark';
  return (watermark) =>
    settleAfterWalk({
      state: { ...state.settle, watermark: state.watermark },
      mode: walk.mode,
      // Unread, the span keeps its waiting heads: nothing below them settles in this run.
      settledBelow: read === 'new' ? null : settle.settledBelow(walk.mode === 'backfill'),
      promote,
      fromPageOne: walk.nextPage === 1,
      startedAt: input.startedAt,
      windowMs: input.settleMs,
      watermark,
      headAt: settle.headAt(),
      // A tail's head waits only for a gap it saw above the heads already waiting.
      openHigh: walk.mode === 'tail' ? settle.openHigh() : undefined,
      now: input.now(),
    });
}

function walkSummary(result: WalkResult): object {
  const { key, mode, pages, records, counts, refetched, watermark, finished } = result;
  const { inserted, updated, rejected } = counts;
  return { stream: key, mode, pages, records, inserted, updated, rejected, refetched, watermark, finished };
}
