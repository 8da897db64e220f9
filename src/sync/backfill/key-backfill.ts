/**
 * The parallel backfill by key: the rawIds from 0 to the newest one (one `order=desc&count=1`
 * request) are split into ranges, each walked by key, ascending from just below it, until an
 * answer reaches its top. An answer is every record between the cursor it was asked from and its
 * last rawId, so each commit proves that span with the records in it: no counting, no seeking,
 * no bisection. The proofs go to the proven ranges the page engine uses, and the same check
 * (`checkBackfill`) moves the watermark once they reach the head; a gap left by a failed range is
 * walked again by key, from just below it.
 */

import { type HeldRecords, isHeld } from '../../domain/commit-pages.js';
import type { KeyAnswerText, LedgerTx, RejectedRecord, TxKeyPage } from '../../domain/model.js';
import { chunkRange, findGaps, type RawIdRange } from '../../domain/raw-id-ranges.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { streamKey } from '../../domain/stream-key.js';
import { MalformedResponseError } from '../../errors.js';
import { createCommitPipeline, recordBytes } from '../commit-pipeline.js';
import type { BackfillRun, BackfillStore, RangePage, ReadAhead } from '../ports/backfill-store.js';
import type { FetchKeyHead, FetchKeyPage, FetchKeyText } from '../ports/fetches.js';
import { keyWalkScreen, type RawIdScreen } from '../raw-id-screen.js';
import { openGapLow, type SettleMark, settleMarks } from '../settle.js';
import { delay, quietLogger, type SyncLogger } from '../sync-logger.js';
import { keyedPlaces, keylessOnce } from '../walk/keyless-repeats.js';
import { addCounts, zeroCounts } from '../write-counts.js';
import type { RangeResult } from './parallel-backfill.js';

/** A stretch of rawIds for one range walk by key: the records after `after` up to `upTo`. */
export interface KeyRangeTask {
  /** The cursor the walk starts from (exclusive); `null`: the bottom of the list, rawId 0 included. */
  after: number | null;
  /** The highest rawId of the range (inclusive). */
  upTo: number;
}

/**
 * Answers in one transaction by default: sixteen cost PostgreSQL about 5 % less than eight for the
 * same records (fewer commits and statements), the walk's memory a few megabytes more
 * (docs/performance.md).
 */
const ANSWERS_PER_COMMIT = 16;

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
}): Promise<{ run: BackfillRun; tasks: KeyRangeTask[] } | null> {
  const key = streamKey(input.spec);
  const head = await input.fetchKeyHead(input.spec);
  if (head === null || head < (input.minHead ?? 0)) return null;
  const run = await input.store.startRun({ id: input.id, key, headRawId: head, totalPages: 0 });
  if (!run) return null;
  return { run, tasks: await pendingKeyTasks(input.store, key, head, input.width) };
}

/** The range walks a run still needs: the stretches below its head that no proof covers. */
export async function pendingKeyTasks(
  store: Pick<BackfillStore, 'provenRanges'>,
  key: string,
  head: number,
  width: number,
): Promise<KeyRangeTask[]> {
  const gaps = findGaps(await store.provenRanges(key), { lo: 0, hi: head });
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
  /** Most answers in one transaction. Default {@link ANSWERS_PER_COMMIT}. */
  answersPerCommit?: number | undefined;
  /**
   * Most bytes of answers (their text) in one transaction, read as each answer is added: lanes
   * walking at once share a limit. Default: the commit pipeline's.
   */
  batchBytes?: (() => number) | undefined;
  /**
   * The run's head time and the settling window: gaps read before they could settle lower the
   * run's `openGap` (see `settle.ts`). Absent: every gap counts as open.
   */
  settle?: { headAt: number; windowMs: number } | undefined;
  /** How often an empty answer that says more follow is asked again. Default 3. */
  emptyAnswerRetries?: number | undefined;
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
}

/**
 * Walks one range by key, ascending from `after`, committing the answers a few at a time with the
 * spans they prove, while the next ones are read. Records above the range are left to the range
 * above (its walk stores and proves them). A failed read first commits what was read before it.
 */
export async function fetchKeyRange(input: FetchKeyRangeInput): Promise<RangeResult> {
  const { spec } = input;
  // Its top comes down when the range gives its upper part away (`split`): every judgement of an
  // answer reads it as the answer is judged.
  const task: KeyRangeTask = { ...input.task };
  const key = streamKey(spec);
  const logger = input.logger ?? quietLogger;
  const now = input.now ?? Date.now;
  const result: RangeResult = { pages: 0, records: 0, counts: zeroCounts(), lowest: null };
  const pipeline = createCommitPipeline<KeyRangeAnswer>({
    maxPages: Math.max(1, input.answersPerCommit ?? ANSWERS_PER_COMMIT),
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
      addCounts(result.counts, counts);
      const records = answers.reduce((n, a) => n + countOf(a.page.records), 0);
      await input.onCommit?.({ answers: answers.length, records, counts });
      const last = answers[answers.length - 1]!;
      if (last.resume.after !== null && last.resume.after < task.upTo) await input.onProgress?.(last.resume);
    },
  });
  let cursor = task.after;
  // The highest record read so far: the lower neighbour of a gap before the next answer's first.
  let below: SettleMark | null = task.after === null ? null : { rawId: task.after, timestamp: 0 };
  const setAside = keylessOnce();
  const screen = keyWalkScreen({ fetchKeyPage: input.fetchKeyPage, spec, logger });
  const reader = createAnswerReader({ ...input, task }, screen, key, now);
  try {
    for (let index = 1; ; index++) {
      input.signal?.throwIfAborted();
      const { served, records, readAt, bytes } = await reader.read(cursor);
      const marks = settleMarks(served).filter((m) => cursor === null || m.rawId > cursor);
      const ids = marks.map((m) => m.rawId);
      const last = ids.length > 0 ? Math.max(...ids) : null;
      const ends = !served.hasNextPage || (last !== null && last >= task.upTo);
      const top = ends ? task.upTo : Math.min(last ?? task.upTo, task.upTo);
      const rejected = setAside(served, rejectedUpTo(served, task.upTo));
      const openGap = gapOf(input, marks, below, readAt, top);
      result.pages++;
      result.records += countOf(records);
      for (const rawId of isHeld(records) ? records.rawIds : records.map((tx) => tx.rawId))
        result.lowest = Math.min(result.lowest ?? rawId, rawId);
      pipeline.add({
        page: { page: index, records, rejected, openGap },
        proven: { lo: cursor === null ? 0 : cursor + 1, hi: top },
        resume: { after: top, upTo: task.upTo },
        bytes,
      });
      if (ends) break;
      below = marks.find((m) => m.rawId === last) ?? below;
      cursor = last;
      if (last !== null) {
        const cut = input.split?.({ cursor: last, upTo: task.upTo }) ?? null;
        if (cut !== null && cut > last && cut < task.upTo) task.upTo = cut;
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

/**
 * The records an answer set aside that belong to the range: those whose rawId is at most `upTo`,
 * and those without one that the answer listed before its first record above `upTo`, or, when it
 * ends at `upTo` and more follow, before that last record (the range above reads the rest,
 * beginning with them), so a record is set aside by one range only.
 */
function rejectedUpTo(served: ServedKeys, upTo: number): RejectedRecord[] {
  if (served.rejected.length === 0) return [];
  const keyed = keyedPlaces(served);
  const above = keyed.find((k) => k.rawId > upTo);
  const last = keyed.at(-1);
  const cut =
    above !== undefined
      ? above.position
      : served.hasNextPage && last !== undefined && last.rawId === upTo
        ? last.position + 1
        : Number.POSITIVE_INFINITY;
  return served.rejected.filter((r) =>
    r.rawId !== undefined ? r.rawId <= upTo : r.index === undefined || r.index < cut,
  );
}

/** An answer as the walk needs it: its records' rawIds and times, what it set aside, whether more follow. */
type ServedKeys = Pick<TxKeyPage, 'rejected' | 'hasNextPage'> & { txs: ReadonlyArray<SettleMark> };

/** One answer of a range walk: what it served, and its records in the range after the cursor. */
interface RangeAnswer {
  served: ServedKeys;
  /** Parsed here, or held by the store that parsed them (`readAhead`). */
  records: LedgerTx[] | HeldRecords;
  /** When it was asked for (`now()`). */
  readAt: number;
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
 * parsed here, as is every answer otherwise; each one's records are prepared for the commit then.
 */
function createAnswerReader(
  input: FetchKeyRangeInput,
  screen: RawIdScreen,
  key: string,
  now: () => number,
): { read(cursor: number | null): Promise<RangeAnswer> } {
  const { store, spec, count, task } = input;
  // The next answer, asked while the one before it was parsed, and when.
  let asked: { cursor: number; at: number; answer: Promise<KeyAnswerText> | undefined } | null = null;
  const ask = (cursor: number) => {
    const at = now();
    const answer = input.fetchKeyText?.(spec, { cursor, count: countUpTo(count, cursor, task.upTo) });
    // Dropped unread after a wrong guess: its failure is nobody's.
    answer?.catch(() => undefined);
    return { cursor, at, answer };
  };
  const parsedHere = async (cursor: number | null, text?: KeyAnswerText): Promise<TxKeyPage> => {
    let parsed: TxKeyPage | undefined;
    try {
      parsed = text?.parse();
    } catch {
      // Read again the way every answer is read: its failures are retried, then reported.
    }
    const served = parsed && (await screen.screen(parsed, { after: cursor, order: 'asc' }));
    if (served !== undefined && fresh(served, cursor ?? 0)) return served;
    return readAnswer(input, screen, key, cursor ?? 0);
  };
  return {
    async read(cursor) {
      const from = cursor ?? 0;
      const next = asked?.cursor === from ? asked : ask(from);
      asked = null;
      const answer = await next.answer;
      let read: ReadAhead | null = null;
      if (answer !== undefined) {
        // The next answer is asked for while the store parses this one, when its text says one follows.
        const last = answer.guess?.hasNextPage ? answer.guess.last : null;
        if (last !== null && last > from && last < task.upTo) asked = ask(last);
        read = await store.readAhead(answer, { after: cursor, upTo: task.upTo });
      }
      // An answer the screen would change is read here, where records can be set aside.
      if (read !== null && screen.passes(read.rawIds, cursor)) {
        const txs = read.rawIds.map((rawId, i) => ({ rawId, timestamp: read.timestamps[i] ?? 0 }));
        const served = { txs, rejected: [], hasNextPage: read.hasNextPage };
        if (fresh(served, from))
          return { readAt: next.at, served, records: read.records, bytes: answer?.text.length ?? 0 };
      }
      const served = await parsedHere(cursor, answer);
      const records = served.txs.filter(
        (tx) => (cursor === null || tx.rawId > cursor) && tx.rawId <= task.upTo,
      );
      store.prepareAhead(records, served.text);
      return { readAt: next.at, served, records, bytes: served.text?.length ?? recordBytes(records) };
    },
  };
}

/**
 * The count to ask after `cursor` in a range that ends at `upTo`: no more than the rawIds left in
 * it, so the range's last answer does not read records that the range above reads again. RawIds
 * are distinct whole numbers, so `upTo - cursor` records after `cursor` reach `upTo` or the end.
 * Never under {@link MIN_RANGE_COUNT}, so that a record without a rawId among them does not fill
 * the answer alone.
 */
export function countUpTo(count: number | undefined, cursor: number, upTo: number): number | undefined {
  if (count === undefined) return undefined;
  return Math.min(count, Math.max(MIN_RANGE_COUNT, upTo - cursor));
}

/** The fewest records a range walk asks for (the client never halves a refused count below it either). */
const MIN_RANGE_COUNT = 10;

/** Whether an answer moves the walk on: a record after `cursor`, or the list's end. */
function fresh(served: ServedKeys, cursor: number): boolean {
  return (
    !served.hasNextPage ||
    served.txs.some((tx) => tx.rawId > cursor) ||
    served.rejected.some((r) => (r.rawId ?? 0) > cursor)
  );
}

/** One answer after `cursor`, screened; an empty one that says more follow is asked again, then malformed. */
async function readAnswer(input: FetchKeyRangeInput, screen: RawIdScreen, key: string, cursor: number) {
  for (let tries = 0; ; tries++) {
    // Asked again with the full count: a short answer of records it cannot key never moves on.
    const answer = await input.fetchKeyPage(input.spec, {
      cursor,
      count: tries === 0 ? countUpTo(input.count, cursor, input.task.upTo) : input.count,
    });
    const served = await screen.screen(answer, { after: cursor, order: 'asc' });
    if (fresh(served, cursor)) return served;
    if (tries >= (input.emptyAnswerRetries ?? 3))
      throw new MalformedResponseError(
        `stream ${key} after rawId ${cursor}`,
        'empty answer although more records follow',
        '',
      );
    await delay(250 * 2 ** tries, input.signal);
  }
}

/** The lowest rawId up to `top` the answer leaves missing that may still fill in (see `settle.ts`). */
function gapOf(
  input: FetchKeyRangeInput,
  marks: readonly SettleMark[],
  below: SettleMark | null,
  readAt: number,
  top: number,
): number | null {
  if (input.settle !== undefined && input.settle.windowMs <= 0) return null;
  const records = below === null ? [...marks] : [...marks, below];
  const gap = openGapLow({
    records,
    above: null,
    readAt,
    headAt: input.settle?.headAt,
    windowMs: input.settle?.windowMs ?? Number.POSITIVE_INFINITY,
    // The bottom range: the rawIds below its first record count too.
    bottom: below === null,
  });
  return gap !== null && gap <= top ? gap : null;
}
