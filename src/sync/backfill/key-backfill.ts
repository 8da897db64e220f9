/**
 * The parallel backfill by key: the rawIds from 0 to the newest one (one `order=desc&count=1`
 * request) are split into ranges, each walked by key, ascending from just below it, until an
 * answer reaches its top. An answer is every record between the cursor it was asked from and its
 * last rawId, so each commit proves that span with the records in it: no counting, no seeking,
 * no bisection. The proofs go to the proven ranges the page engine uses, and the same check
 * (`checkBackfill`) moves the watermark once they reach the head; a gap left by a failed range is
 * walked again by key, from just below it.
 */

import { COMMIT_SIZES } from '../../defaults.js';
import { type HeldRecords, isHeld } from '../../domain/commit-pages.js';
import type { KeyAnswerText, LedgerTx, TxKeyPage } from '../../domain/model.js';
import { chunkRange, findGaps, type RawIdRange } from '../../domain/raw-id-ranges.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { streamKey } from '../../domain/stream-key.js';
import { createCommitPipeline, recordBytes } from '../commit-pipeline.js';
import {
  countUpTo,
  createKeySource,
  type KeyRangeTask,
  type KeyRead,
  type KeySettling,
  movesOn,
  readKeyAfter,
} from '../key-source.js';
import type { BackfillRun, BackfillStore, RangePage, ReadAhead } from '../ports/backfill-store.js';
import type { FetchKeyHead, FetchKeyPage, FetchKeyText } from '../ports/fetches.js';
import type { RangeEdges } from '../range-edges.js';
import { keyWalkScreen, type RawIdScreen } from '../raw-id-screen.js';
import { quietLogger, type SyncLogger } from '../sync-logger.js';
import { addCounts, zeroCounts } from '../write-counts.js';
import { type RangeResult, runProofs } from './run-check.js';

/**
 * Requests of a full count in one range by default: 10,000 rawIds a range at a hundred a request.
 * Near the end of a backfill, ranges still being walked give their upper halves to lanes left idle
 * (`split`), so a range this long never leaves the budget unspent.
 */
export const KEY_REQUESTS_PER_RANGE = 100;

/**
 * Splits the rawIds `lo..hi` into ranges of `width`: one range walk each. Ranges end on multiples
 * of `width` (a cursor on a multiple reads whole answers up to the next one), so a later split of
 * a gap lines up with them.
 */
export function splitKeyRanges(gap: RawIdRange, width: number): KeyRangeTask[] {
  return chunkRange(gap, width).map(({ lo, hi }) => ({ after: lo === 0 ? null : lo - 1, upTo: hi }));
}

/** The lanes a fleet walks ranges with that the last jobs are sized for: four workers at four jobs. */
const FLEET_LANES = 16;

/**
 * Range jobs in the order a fleet takes them, the last ones narrower: a job as wide as a
 * {@link FLEET_LANES}th of the rawIds above it (at most `width`, at least `floor`, aligned as
 * {@link splitKeyRanges} aligns). Each lane of a fleet walks one job at a time at its share of
 * the budget; with jobs of one width, the last ones end seconds apart, the budget unspent
 * meanwhile. Narrowing as the work left shrinks, the lanes end within an answer or two of each
 * other. (A process's own lanes split the ranges still walked instead.)
 */
export function taperKeyTasks(tasks: readonly KeyRangeTask[], width: number, floor: number): KeyRangeTask[] {
  const tapered: KeyRangeTask[] = [];
  let fromTop = 0;
  for (let i = tasks.length - 1; i >= 0; i--) {
    const { after, upTo } = tasks[i]!;
    const bottom = after ?? -1;
    const piece = Math.min(width, Math.max(floor, Math.floor(fromTop / FLEET_LANES)));
    // Even pieces, cut from the top on multiples of `floor` (a cursor there reads whole answers).
    const pieces = Math.max(1, Math.round((upTo - bottom) / piece));
    for (let k = 1, top = upTo; k <= pieces; k++) {
      const cut = k === pieces ? bottom : Math.round((upTo - ((upTo - bottom) * k) / pieces) / floor) * floor;
      if (cut >= top) continue;
      tapered.push({ after: cut < 0 ? null : cut, upTo: top });
      top = cut;
    }
    fromTop += upTo - bottom;
  }
  return staggerFirstJobs(tapered.reverse(), width, floor);
}

/**
 * The first {@link FLEET_LANES} jobs, those a fleet takes at once, one to sixteen sixteenths of
 * `width` wide, in place of the first whole ranges: its lanes then end them one after another.
 * A lane that ends a job waits for the job's last commit, idle; jobs of one width all end within
 * a second or two, the commits then contend for the cores and the budget goes unspent meanwhile,
 * and every wave after ends as one again.
 */
function staggerFirstJobs(tasks: KeyRangeTask[], width: number, floor: number): KeyRangeTask[] {
  // Whole ranges enough to hold every width once: sixteen widths' worth, halved.
  const replaced = Math.ceil((FLEET_LANES + 1) / 2);
  if (tasks.length < replaced || tasks.slice(0, replaced).some((t) => t.upTo - (t.after ?? -1) < width))
    return tasks;
  const end = tasks[replaced - 1]!.upTo;
  const staggered: KeyRangeTask[] = [];
  let after = tasks[0]!.after;
  for (let lane = 1; lane <= FLEET_LANES; lane++) {
    const top = (after ?? 0) + Math.max(floor, Math.round((width * lane) / FLEET_LANES / floor) * floor);
    if (top >= end) break;
    staggered.push({ after, upTo: top });
    after = top;
  }
  staggered.push({ after, upTo: end });
  return [...staggered, ...tasks.slice(replaced)];
}

/** The range walks that cover `gaps`, each at most `width` rawIds wide. */
export function keyRepairTasks(gaps: readonly RawIdRange[], width: number): KeyRangeTask[] {
  return gaps.flatMap((gap) => splitKeyRanges(gap, width));
}

/**
 * Begins a parallel backfill by key: reads the head, records the run, and plans the range walks
 * (of an earlier run that gave up, only what its proofs leave). `null` when the list is empty or
 * a run is already going.
 */
export async function planKeyBackfill(input: {
  store: BackfillStore;
  fetchKeyHead: FetchKeyHead;
  spec: StreamSpec;
  id: string;
  /** RawIds a range. */
  width: number;
  /** A head below this is left to a plain walk (a few requests). Default 0. */
  minHead?: number | undefined;
  /** A repair's (`REPAIR_FLOOR`, `sync --full`); default a first backfill's. */
  floor?: number | null | undefined;
}): Promise<{ run: BackfillRun; tasks: KeyRangeTask[] } | null> {
  const key = streamKey(input.spec);
  const head = await input.fetchKeyHead(input.spec);
  if (head === null || head < (input.minHead ?? 0)) return null;
  const { floor } = input;
  const run = await input.store.startRun({ id: input.id, key, headRawId: head, totalPages: 0, floor });
  if (!run) return null;
  return { run, tasks: await pendingKeyTasks(input.store, run, input.width) };
}

/** The range walks a run still needs: the stretches below its head that its proofs do not cover. */
export async function pendingKeyTasks(
  store: Pick<BackfillStore, 'provenRanges'>,
  run: Pick<BackfillRun, 'id' | 'key' | 'floor' | 'headRawId'>,
  width: number,
): Promise<KeyRangeTask[]> {
  const gaps = findGaps(await runProofs(store, run), { lo: 0, hi: run.headRawId });
  return keyRepairTasks(gaps, width);
}

/** What {@link fetchKeyRange} needs. */
export interface FetchKeyRangeInput {
  store: BackfillStore;
  fetchKeyPage: FetchKeyPage;
  /**
   * Answers as text, for a store that parses them on another thread (`readAhead`): the walk then
   * asks for each next answer while the store parses this one. Optional.
   */
  fetchKeyText?: FetchKeyText | undefined;
  spec: StreamSpec;
  backfillId: string;
  task: KeyRangeTask;
  /** Records asked per request. Default: the fetch's own. */
  count?: number | undefined;
  signal?: AbortSignal | undefined;
  logger?: SyncLogger | undefined;
  /**
   * Asked after each answer that leaves more of the range to read: a rawId to end the range at
   * instead (the caller walks the rest as a range of its own), or `null` to go on. For lanes left
   * idle near the end of a backfill. Default: never.
   */
  split?: ((at: { cursor: number; upTo: number }) => number | null) | undefined;
  /** Called after each commit with the task that resumes after it (saved in a job). */
  onProgress?: ((resume: KeyRangeTask) => Promise<void>) | undefined;
  /** Called after each commit with what it stored (progress bars). */
  onCommit?:
    | ((committed: {
        answers: number;
        records: number;
        counts: RangeResult['counts'];
      }) => Promise<void> | void)
    | undefined;
  /** Most answers in one transaction. Default `COMMIT_SIZES.keyRangeAnswers`. */
  answersPerCommit?: number | undefined;
  /**
   * Most bytes of answers (their text) in one transaction, read as each answer is added: lanes
   * walking at once share a limit. Default: the commit pipeline's.
   */
  batchBytes?: (() => number) | undefined;
  /**
   * The run's head time and the settling window: gaps read before they could settle lower the
   * run's `openGap` (see `settle.ts`); a catch-up's gaps at or below `floor` have settled already.
   * Absent: every gap counts as open.
   */
  settle?: KeySettling | undefined;
  /** The keyless records where the run's ranges meet (`range-edges.ts`); absent: not followed. */
  edges?: RangeEdges | undefined;
  /**
   * The range's records are stored already (a repair): the store reads its answers ahead without
   * preparing them for a copy that will not be made (`readAhead`'s `stored`).
   */
  stored?: boolean | undefined;
  now?: (() => number) | undefined;
}

/** One answer of a range walk, waiting for its commit. */
interface KeyRangeAnswer {
  page: RangePage;
  /** What the answer proves: every rawId from the cursor it was asked from to its last, capped at the range's top. */
  proven: RawIdRange;
  /** The task that resumes after it. */
  resume: KeyRangeTask;
  /** About how many bytes it holds (a batch is full by bytes too). */
  bytes: number;
  /** Records set aside that the range across an edge counted already (`KeyStep.repeats`). */
  repeats: number;
}

/**
 * Walks one range by key, ascending from `after`, committing the answers a few at a time with the
 * spans they prove, while the next ones are read. Records above the range are left to the range
 * above (its walk stores and proves them). A failed read first commits what was read before it.
 */
export async function fetchKeyRange(input: FetchKeyRangeInput): Promise<RangeResult> {
  const { spec } = input;
  const key = streamKey(spec);
  const logger = input.logger ?? quietLogger;
  const now = input.now ?? Date.now;
  const result: RangeResult = { pages: 0, records: 0, counts: zeroCounts(), lowest: null };
  const screen = keyWalkScreen({ fetchKeyPage: input.fetchKeyPage, spec, logger });
  const reader = createAnswerReader(input, screen, now);
  const source = createKeySource({
    task: input.task,
    read: reader.read,
    settle: input.settle ?? { headAt: undefined, windowMs: Number.POSITIVE_INFINITY },
    edges: input.edges,
  });
  // Its top comes down when the range gives its upper part away (`split`).
  const { task } = source;
  const pipeline = createCommitPipeline<KeyRangeAnswer>({
    maxPages: Math.max(1, input.answersPerCommit ?? COMMIT_SIZES.keyRangeAnswers),
    maxBytes: input.batchBytes,
    sizeOf: (answer) => answer.bytes,
    lingerMs: 0,
    now,
    commit: async (answers) => {
      const proven = answers.map((a) => a.proven);
      const counts = await input.store.commitRangePages({
        key,
        backfillId: input.backfillId,
        pages: answers.map((a) => a.page),
        proven,
      });
      // Stored by both ranges (one row, seen twice), counted once.
      counts.rejected -= answers.reduce((n, a) => n + a.repeats, 0);
      addCounts(result.counts, counts);
      const records = answers.reduce((n, a) => n + countOf(a.page.records), 0);
      await input.onCommit?.({ answers: answers.length, records, counts });
      const last = answers[answers.length - 1]!;
      if (last.resume.after !== null && last.resume.after < task.upTo) await input.onProgress?.(last.resume);
    },
  });
  try {
    for (let index = 1; ; index++) {
      input.signal?.throwIfAborted();
      const { read, proven, ends, last, rejected, openGap, repeats } = await source.next();
      const { records, bytes } = read;
      result.pages++;
      result.records += countOf(records);
      for (const rawId of isHeld(records) ? records.rawIds : records.map((tx) => tx.rawId))
        result.lowest = Math.min(result.lowest ?? rawId, rawId);
      pipeline.add({
        page: { page: index, records, rejected, openGap },
        proven,
        resume: { after: proven.hi, upTo: task.upTo },
        bytes,
        repeats,
      });
      if (ends) break;
      if (last !== null) {
        const cut = input.split?.({ cursor: last, upTo: task.upTo }) ?? null;
        if (cut !== null) source.cut(cut);
      }
      if (pipeline.full()) await pipeline.submit();
      // Else committed as soon as the running commit ends; a failure is thrown by the next submit.
      // Answers the store parsed come at its thread's pace, slower than commits end: committed so,
      // they would go one or two a transaction, and PostgreSQL pays for each (docs/performance.md).
      else if (!isHeld(records)) pipeline.submit().catch(() => {});
    }
  } catch (error) {
    // Keep what was read, so a retry resumes after it; the read's error is the one to report.
    await pipeline.flush().catch((commitError: unknown) => {
      logger.warn({ stream: key, err: commitError }, 'answers read before a failed read not committed');
    });
    throw error;
  }
  await pipeline.flush();
  logger.debug(
    { stream: key, after: task.after, up_to: task.upTo, requests: result.pages },
    'key range fetched',
  );
  return result;
}

/** One answer of a range walk: what it served, and its records in the range after the cursor. */
interface RangeAnswer extends KeyRead {
  /** Parsed here, or held by the store that parsed them (`readAhead`). */
  records: LedgerTx[] | HeldRecords;
  /** About how many bytes it holds: its text, else its records'. */
  bytes: number;
}

/** How many records a page holds. */
function countOf(records: LedgerTx[] | HeldRecords): number {
  return isHeld(records) ? records.rawIds.length : records.length;
}

/**
 * Reads a range walk's answers, one after another. With a store that parses answers on another
 * thread (`readAhead`) and a fetch that keeps their text, each answer is parsed there, and the
 * next one is asked for meanwhile, after the rawId its text names last (`KeyAnswerText.guess`);
 * the parse decides, and an answer asked after a wrong guess is dropped unread. An answer the
 * store cannot take (a record set aside, one that cannot be encoded, text it cannot parse) is
 * parsed here, as is every answer otherwise, and its commit takes the full way.
 */
function createAnswerReader(
  input: FetchKeyRangeInput,
  screen: RawIdScreen,
  now: () => number,
): { read(cursor: number | null, upTo: number): Promise<RangeAnswer> } {
  const { store, spec, count } = input;
  const reading = {
    fetchKeyPage: input.fetchKeyPage,
    screen,
    spec,
    count,
    signal: input.signal,
  };
  // The next answer, asked while the one before it was parsed, and when.
  let asked: { cursor: number; at: number; answer: Promise<KeyAnswerText> | undefined } | null = null;
  const ask = (cursor: number, upTo: number) => {
    const at = now();
    const answer = input.fetchKeyText?.(spec, { cursor, count: countUpTo(count, cursor, upTo) });
    // Dropped unread after a wrong guess: its failure is nobody's.
    answer?.catch(() => undefined);
    return { cursor, at, answer };
  };
  const parsedHere = async (
    cursor: number | null,
    upTo: number,
    text?: KeyAnswerText,
  ): Promise<TxKeyPage> => {
    let parsed: TxKeyPage | undefined;
    try {
      parsed = text?.parse();
    } catch {
      // Read again the way every answer is read: its failures are retried, then reported.
    }
    const served = parsed && (await screen.screen(parsed, { after: cursor, order: 'asc' }));
    if (served !== undefined && movesOn(served, cursor ?? 0)) return served;
    return readKeyAfter(reading, cursor ?? 0, upTo);
  };
  return {
    async read(cursor, upTo) {
      const from = cursor ?? 0;
      const next = asked?.cursor === from ? asked : ask(from, upTo);
      asked = null;
      const answer = await next.answer;
      let read: ReadAhead | null = null;
      if (answer !== undefined) {
        // The next answer is asked for while the store parses this one, when its text says one follows.
        const last = answer.guess?.hasNextPage ? answer.guess.last : null;
        if (last !== null && last > from && last < upTo) asked = ask(last, upTo);
        read = await store.readAhead(answer, { after: cursor, upTo, stored: input.stored });
      }
      // An answer the screen would change is read here, where records can be set aside.
      if (read !== null && screen.passes(read.rawIds, cursor)) {
        const txs = read.rawIds.map((rawId, i) => ({ rawId, timestamp: read.timestamps[i] ?? 0 }));
        const served = { txs, rejected: [], hasNextPage: read.hasNextPage };
        if (movesOn(served, from))
          return { readAt: next.at, served, records: read.records, bytes: answer?.text.length ?? 0 };
      }
      const served = await parsedHere(cursor, upTo, answer);
      const records = served.txs.filter((tx) => (cursor === null || tx.rawId > cursor) && tx.rawId <= upTo);
      return { readAt: next.at, served, records, bytes: served.text?.length ?? recordBytes(records) };
    },
  };
}
