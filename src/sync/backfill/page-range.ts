/**
 * A range by page number: a run of pages read in ascending page order (newest records first),
 * the proof that neighbouring pages overlap or join. How a run by page number is planned (page 1
 * for the head and the count, split into ranges of pages), how one range is read and committed,
 * and how a gap is walked again (from the page the record above it was last seen on, found by
 * probing at doubling distances). The run's check is `run-check.ts`, shared with the ranges by key.
 */
import { PAGE_SIZE } from '../../defaults.js';
import type { TxPage } from '../../domain/model.js';
import { isEmptyPage, pageRawIds } from '../../domain/page-links.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { streamKey } from '../../domain/stream-key.js';
import {
  type CompletenessReport,
  judgeCompleteness,
  type ObservedPage,
  type PageRange,
  provenByRun,
  repairStartFor,
  repairStartPage,
  splitPages,
} from '../../verify/completeness.js';
import { askWhileEmpty, type EmptyRetry } from '../empty-answers.js';
import type { BackfillRun, BackfillStore, RangeStarts } from '../ports/backfill-store.js';
import type { FetchPage } from '../ports/fetches.js';
import type { WriteCounts } from '../ports/sync-store.js';
import { screenPages } from '../raw-id-screen.js';
import { openGapLow, type SettleMark, settleMarks } from '../settle.js';
import { quietLogger, type SyncLogger } from '../sync-logger.js';
import { addCounts, zeroCounts } from '../write-counts.js';
import { createRangeCommitter, RANGE_COMMIT_DEFAULTS } from './range-commits.js';
import { type RangeResult, runProofs } from './run-check.js';

/** A stretch of the list for one job: pages `fromPage..toPage`, or down past `stopBelowRawId`. */
export interface RangeTask {
  fromPage: number;
  /** Last page to fetch; `null`: go on to the end of the list (or past `stopBelowRawId`). */
  toPage: number | null;
  /** Stop once a page holds a rawId below this (a repair walk across a gap). */
  stopBelowRawId: number | null;
  /**
   * A repair walk first seeks forward from `fromPage` to the last page still holding a record at
   * or above this rawId (arrivals pushed it there), probing pages at doubling distances rather
   * than walking every page of the shift.
   */
  seekRawId?: number | null | undefined;
  /**
   * The lowest rawId of page `fromPage - 1`, committed by an earlier attempt of this task: the
   * walk resumes there and still joins the two pages, since they were fetched in order.
   */
  previousLow?: number | null | undefined;
}

/** Only unfiltered lists hold every rawId, so only they can count stored records to find a page. */
export function supportsParallelBackfill(spec: StreamSpec): boolean {
  return !spec.account && !spec.tokenTag && !spec.action && !spec.withoutAction;
}

/**
 * Begins a parallel backfill: reads page 1 for the head and the page count, records the run, and
 * splits the pages into range tasks (the last one open-ended, since the list grows while the
 * ranges are fetched). Returns `null` when a run is already going.
 */
export async function planBackfill(input: {
  store: BackfillStore;
  fetchPage: FetchPage;
  spec: StreamSpec;
  id: string;
  pagesPerRange: number;
  /** A list of fewer pages is left to a walk (`null`, no run recorded). Default 0. */
  minPages?: number | undefined;
  /** A repair's (`REPAIR_FLOOR`, `sync --full`); default a first backfill's. */
  floor?: number | null | undefined;
}): Promise<{ run: BackfillRun; tasks: RangeTask[] } | null> {
  const key = streamKey(input.spec);
  const first = await screenPages(input.fetchPage, quietLogger)(input.spec, 1);
  const ids = pageRawIds(first);
  const headRawId = ids.length > 0 ? Math.max(...ids) : 0;
  const totalPages = Math.max(1, first.totalPages);
  if (totalPages < (input.minPages ?? 0)) return null;
  const run = await input.store.startRun({ id: input.id, key, headRawId, totalPages, floor: input.floor });
  if (!run) return null;
  return { run, tasks: await pendingPageTasks(input.store, run, input.pagesPerRange) };
}

/**
 * The range tasks a run's proofs leave: its pages split into ranges while nothing is proven (the
 * last one open-ended, since the list grows while the ranges are fetched), else one repair walk
 * per gap (an earlier run that gave up, or a killed one, left its proofs).
 */
export async function pendingPageTasks(
  store: Pick<BackfillStore, 'provenRanges' | 'storedAbove'>,
  run: Pick<BackfillRun, 'id' | 'key' | 'floor' | 'headRawId' | 'totalPages'>,
  pagesPerRange: number,
): Promise<RangeTask[]> {
  const earlier = await runProofs(store, run);
  if (earlier.length > 0) {
    const report = judgeCompleteness(earlier, run.headRawId);
    return pageRepairTasks(store, { report, head: run.headRawId });
  }
  return splitPages(run.totalPages, pagesPerRange).map((range: PageRange, i, all) => ({
    fromPage: range.from,
    toPage: i === all.length - 1 ? null : range.to,
    stopBelowRawId: null,
    seekRawId: null,
  }));
}

/**
 * One repair walk by page number per gap a check left (`CheckOutcome`'s `report` and `head`):
 * from where the record above it was last seen, down past it.
 */
export async function pageRepairTasks(
  store: Pick<BackfillStore, 'storedAbove'>,
  check: { report: CompletenessReport; head: number },
  pageSize = PAGE_SIZE,
): Promise<RangeTask[]> {
  const tasks: RangeTask[] = [];
  for (const gap of check.report.gaps) {
    let fromPage = repairStartFor(gap, check.report.proven, 0);
    if (fromPage === 0) fromPage = repairStartPage(await store.storedAbove(gap.hi), pageSize);
    const seekRawId = gap.hi < check.head ? gap.hi + 1 : null;
    tasks.push({ fromPage, toPage: null, stopBelowRawId: gap.lo, seekRawId });
  }
  return tasks;
}

/** What {@link fetchRange} needs: the ports, the run, the task and how to commit. */
export interface FetchRangeInput {
  store: BackfillStore;
  fetchPage: FetchPage;
  spec: StreamSpec;
  backfillId: string;
  task: RangeTask;
  signal?: AbortSignal | undefined;
  logger?: SyncLogger | undefined;
  /** Called after each commit with the task that resumes after it (saved in the job). */
  onProgress?: ((resume: RangeTask) => Promise<void>) | undefined;
  /** Called after each commit with what it stored (a backfill in lanes: progress, the lease). */
  onCommit?:
    | ((committed: { answers: number; records: number; counts: WriteCounts }) => Promise<void>)
    | undefined;
  /** Most pages per transaction. Default 32. */
  pagesPerCommit?: number | undefined;
  /** How long fetched pages wait for more while no commit runs. Default 1000 ms. */
  commitLingerMs?: number | undefined;
  /**
   * The run's head time and the settling window: each page's gaps read before they could settle
   * lower the run's `openGap` (see `settle.ts`). Absent: every gap counts as open.
   */
  settle?: { headAt: number; windowMs: number; floor?: number | null | undefined } | undefined;
  /** Clock, for the read times of pages. Default `Date.now`. */
  now?: (() => number) | undefined;
  /** How an empty page before the last is asked again (`../empty-answers.ts`). Default `EMPTY_ANSWER_RETRY`. */
  emptyRetry?: Omit<EmptyRetry, 'signal'> | undefined;
  /**
   * For a range that can give its upper pages to an idle lane (`lanes.ts`): asked after each page
   * that leaves more to read, it returns the range's new last page, or `null`. A repair walk
   * (down past a rawId) is never split.
   */
  split?: ((at: { cursor: number; upTo: number; open: boolean }) => number | null) | undefined;
  /**
   * The first pages read by the run's ranges (in memory for `sync`'s lanes, in Redis for the
   * workers' range jobs): a range reads on past its last page until it reaches the first page of
   * the range planned after it. Absent, a range ends at its last page, and the check repairs what
   * drifted.
   */
  starts?: RangeStarts | undefined;
}

/** A run's {@link RangeStarts}, kept in memory. */
export function rangeStarts(): RangeStarts {
  const tops = new Map<number, number>();
  return {
    began: async (page, rawIds) => {
      if (rawIds.length > 0 && !tops.has(page)) tops.set(page, Math.max(...rawIds));
    },
    topAt: async (page) => tops.get(page),
  };
}

/**
 * Fetches one range task in ascending page order, one page at a time, committing its pages a few
 * at a time with the ranges they prove (their spans, and the joins between consecutive pages of
 * this task) while the next pages are fetched. Pages of one task are never fetched out of order,
 * so nothing can slip between them; a batch commits only after the one before it, so a proof
 * never reaches past records that are not stored. A failed fetch first commits the pages
 * fetched before it.
 */
export async function fetchRange(input: FetchRangeInput): Promise<RangeResult> {
  // Every page screened (see `raw-id-screen.ts`): a record the service does not vouch for proves nothing.
  return fetchScreenedRange({
    ...input,
    fetchPage: screenPages(input.fetchPage, input.logger ?? quietLogger),
  });
}

/** {@link fetchRange} over pages screened already. */
async function fetchScreenedRange(input: FetchRangeInput): Promise<RangeResult> {
  const { task, spec } = input;
  const key = streamKey(spec);
  const logger = input.logger ?? quietLogger;
  const result: RangeResult = { pages: 0, records: 0, counts: zeroCounts(), lowest: null };
  const source = createPageSource(input, await rangeStartPage(input, result));
  const previous: ObservedPage | null =
    task.previousLow === null || task.previousLow === undefined || task.fromPage < 2
      ? null
      : {
          page: task.fromPage - 1,
          rawIds: [task.previousLow],
          totalPages: Number.MAX_SAFE_INTEGER,
          anchor: true,
        };
  let last: ObservedPage | null = null;
  let finished = false;
  const committer = createRangeCommitter({
    writer: input.store,
    key,
    backfillId: input.backfillId,
    previous,
    maxPages: Math.max(1, input.pagesPerCommit ?? RANGE_COMMIT_DEFAULTS.maxPages),
    lingerMs: input.commitLingerMs ?? RANGE_COMMIT_DEFAULTS.lingerMs,
    onCommitted: async (committed, counts, batch) => {
      addCounts(result.counts, counts);
      await input.onCommit?.({ answers: batch.pages, records: batch.records, counts });
      if (finished && committed.page === last?.page) return;
      const low = committed.rawIds.length > 0 ? Math.min(...committed.rawIds) : null;
      if (low === null) return;
      await input.onProgress?.({
        ...task,
        toPage: source.toPage,
        fromPage: committed.page + 1,
        seekRawId: null,
        previousLow: low,
      });
    },
  });
  for (;;) {
    let step: PageStep;
    try {
      step = await source.next();
    } catch (error) {
      // Keep what was fetched, so a retry resumes after it; the fetch's error is the one to report.
      await committer.flush().catch((commitError: unknown) => {
        logger.warn({ stream: key, err: commitError }, 'pages fetched before a failed fetch not committed');
      });
      throw error;
    }
    const { served, observed } = step;
    result.pages++;
    result.records += served.txs.length;
    for (const rawId of observed.rawIds) result.lowest = Math.min(result.lowest ?? rawId, rawId);
    finished = step.ends;
    last = observed;
    const page = {
      page: observed.page,
      records: served.txs,
      rejected: served.rejected,
      openGap: step.openGap,
    };
    await committer.add(observed, page);
    if (finished) break;
    if (source.splittable) {
      const { toPage } = source;
      source.cut(
        input.split?.({ cursor: observed.page, upTo: toPage ?? served.totalPages, open: toPage === null }) ??
          toPage,
      );
    }
  }
  await committer.flush();
  logger.debug(
    { stream: key, from_page: task.fromPage, pages: result.pages, records: result.records },
    'range fetched',
  );
  return result;
}

/** One page of a range by page number, judged. */
export interface PageStep {
  served: TxPage;
  observed: ObservedPage;
  /**
   * The range ends with it: the list ends, a repair walk passed below its gap, or the range read
   * past its last page (and reached the range planned after it, see {@link RangeStarts}).
   */
  ends: boolean;
  /** The lowest rawId the page leaves missing that may still fill in (see `settle.ts`); `null`: none. */
  openGap: number | null;
}

/**
 * The source by page number: a range's pages read one after the other in ascending page order
 * from `startPage`, each judged here (where the range ends, the gap it leaves open), as the
 * source by key judges answers (`../key-source.ts`).
 */
export interface PageSource {
  next(): Promise<PageStep>;
  /** Whether the range may give its upper pages away (`split`): a planned range, not a repair walk. */
  readonly splittable: boolean;
  /** Its last page as it stands (`null`: open to the end of the list). */
  readonly toPage: number | null;
  /** Ends the range at `toPage` instead. */
  cut(toPage: number | null): void;
}

function createPageSource(input: FetchRangeInput, startPage: number): PageSource {
  const { task } = input;
  const gaps = pageGaps(input);
  let page = startPage - 1;
  // Comes down when the range gives its upper pages away (`split`).
  let toPage = task.toPage;
  const splittable = task.stopBelowRawId === null && startPage === task.fromPage;
  return {
    splittable,
    get toPage() {
      return toPage;
    },
    cut(to) {
      toPage = to;
    },
    async next() {
      page++;
      const readAt = gaps.now();
      const served = await fetchRangePage(input, page);
      const rawIds = pageRawIds(served);
      const low = rawIds.length > 0 ? Math.min(...rawIds) : null;
      const atEnd = rawIds.length === 0 || page >= served.totalPages;
      if (page === task.fromPage && splittable) await input.starts?.began(page, rawIds);
      const pastGap = task.stopBelowRawId !== null && low !== null && low < task.stopBelowRawId;
      // Read on past the last page at most as many pages again as the range had: a lane that reads
      // slower than arrivals push the pages down never reaches the next range, and leaves the
      // space between to the check rather than chase it.
      const pastRange =
        toPage !== null &&
        page >= toPage &&
        !(page < 2 * toPage - startPage + 1 && (await shortOfNext(input.starts, toPage, low)));
      return {
        served,
        observed: { page, rawIds, totalPages: served.totalPages },
        ends: atEnd || pastGap || pastRange,
        openGap: gaps.of(served, readAt, atEnd),
      };
    },
  };
}

/**
 * Whether a range that has read its last page (`toPage`, lowest rawId `low`) has yet to reach the
 * first page of the range beginning after it: pages drifted meanwhile (see {@link RangeStarts}).
 */
async function shortOfNext(
  starts: RangeStarts | undefined,
  toPage: number,
  low: number | null,
): Promise<boolean> {
  if (starts === undefined || low === null) return false;
  const next = await starts.topAt(toPage + 1);
  // Touching rawIds join in the proofs (`mergeRanges`): no page more for those.
  return next !== undefined && low > next + 1;
}

/**
 * The gaps of a range task's pages that may still fill in: each page is judged with the lowest
 * record of the page read before it in the task (the space between them was read with it).
 */
function pageGaps(input: Pick<FetchRangeInput, 'settle' | 'now'>): {
  now: () => number;
  of(served: TxPage, readAt: number, atEnd: boolean, alone?: boolean): number | null;
} {
  const now = input.now ?? Date.now;
  let above: SettleMark | null = null;
  return {
    now,
    of(served, readAt, atEnd, alone = false) {
      const records = settleMarks(served);
      const gap = openGapLow({
        records,
        above: alone ? null : above,
        readAt,
        headAt: input.settle?.headAt,
        windowMs: input.settle?.windowMs ?? Number.POSITIVE_INFINITY,
        bottom: atEnd,
        floor: input.settle?.floor,
      });
      if (!alone && records.length > 0) above = records.reduce((low, r) => (r.rawId < low.rawId ? r : low));
      return gap;
    },
  };
}

/** One page of a range task; an empty page before the last one is asked again, then malformed. */
function fetchRangePage(input: FetchRangeInput, page: number): Promise<TxPage> {
  input.signal?.throwIfAborted();
  return askWhileEmpty({
    ask: () => input.fetchPage(input.spec, page),
    empty: (served) => isEmptyPage(served) && page < served.totalPages,
    where: `stream ${streamKey(input.spec)} page ${page}`,
    problem: 'empty page before the last',
    signal: input.signal,
    ...input.emptyRetry,
  });
}

/**
 * Where a task's walk starts: `fromPage`, or for a repair walk the page found by seeking, each
 * probe stored (and counted in `result`) like any page.
 */
async function rangeStartPage(input: FetchRangeInput, result: RangeResult): Promise<number> {
  const { task, spec } = input;
  if (task.seekRawId === null || task.seekRawId === undefined) return task.fromPage;
  const gaps = pageGaps(input);
  const fetchAlone = async (page: number): Promise<number[]> => {
    const readAt = gaps.now();
    const served = await input.fetchPage(spec, page);
    const rawIds = pageRawIds(served);
    const observed: ObservedPage = { page, rawIds, totalPages: served.totalPages };
    const counts = await input.store.commitRangePages({
      key: streamKey(spec),
      backfillId: input.backfillId,
      proven: provenByRun([observed]),
      pages: [
        {
          page,
          records: served.txs,
          rejected: served.rejected,
          openGap: gaps.of(served, readAt, false, true),
        },
      ],
    });
    addCounts(result.counts, counts);
    result.pages++;
    result.records += served.txs.length;
    return rawIds;
  };
  return seekPage({ from: task.fromPage, target: task.seekRawId, fetch: fetchAlone });
}

/**
 * The last page at or after `from` that still holds a record at or above `target`, found by
 * probing at doubling distances and then halving. Every probe is stored like any page. Pages only
 * shift later while this runs, so a page found to hold such a record stays a safe start.
 */
export async function seekPage(input: {
  from: number;
  target: number;
  fetch: (page: number) => Promise<number[]>;
}): Promise<number> {
  const reaches = (ids: number[]): boolean => ids.length > 0 && Math.max(...ids) >= input.target;
  let good = input.from;
  let bad: number | null = null;
  for (let step = 1; bad === null; step *= 2) {
    const probe = good + step;
    if (reaches(await input.fetch(probe))) good = probe;
    else bad = probe;
  }
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2);
    if (reaches(await input.fetch(middle))) good = middle;
    else bad = middle;
  }
  return good;
}
