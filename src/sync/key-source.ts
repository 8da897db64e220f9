/**
 * The source by key: one range of a stream's rawIds read ascending, each answer asked after the
 * last rawId of the one before, until an answer reaches the range's top or the list ends. The
 * range walks of a backfill read closed ranges; the walk by key reads the open top range (no
 * top). Each answer is judged here, in one place for both: the span it proves, whether the range
 * ends with it, the records it set aside that are the range's (each once), and the lowest gap it
 * leaves that may still fill in (`settle.ts`). How an answer is fetched is the caller's (a plain
 * fetch, or one read ahead on the store's thread); an empty answer that says more follow is asked
 * again by {@link readKeyAfter}.
 */
import { keyedPlaces, keylessOnce } from '../domain/keyless-repeats.js';
import type { RejectedRecord, TxKeyPage } from '../domain/model.js';
import type { RawIdRange } from '../domain/raw-id-ranges.js';
import { type StreamSpec, streamKey } from '../domain/stream-key.js';
import { askWhileEmpty } from './empty-answers.js';
import type { FetchKeyPage } from './ports/fetches.js';
import { edgeWatch, type RangeEdges } from './range-edges.js';
import type { RawIdScreen } from './raw-id-screen.js';
import { openGapLow, type SettleMark, settleMarks } from './settle.js';

/** A stretch of rawIds read by key: the records after `after` up to `upTo`. */
export interface KeyRangeTask {
  /** The cursor the walk starts from (exclusive); `null`: the bottom of the list, rawId 0 included. */
  after: number | null;
  /** The highest rawId of the range (inclusive); `Infinity`: the open top range. */
  upTo: number;
}

/** An answer as judging needs it: its records' rawIds and times, what it set aside, whether more follow. */
export type ServedKeys = Pick<TxKeyPage, 'rejected' | 'hasNextPage'> & { txs: ReadonlyArray<SettleMark> };

/** One answer fetched: what it served, screened, and when it was asked for. */
export interface KeyRead {
  served: ServedKeys;
  readAt: number;
}

/** One answer of a range, judged. */
export interface KeyStep<R extends KeyRead> {
  read: R;
  /** Every rawId from the cursor it was asked after to its last, capped at the range's top. */
  proven: RawIdRange;
  /** The range ends with it: it reaches the top, or no more follow. */
  ends: boolean;
  /** Its last rawId after the cursor (the next cursor); `null` when it served none. */
  last: number | null;
  /** The records it set aside that are the range's, each once. */
  rejected: RejectedRecord[];
  /** The lowest rawId up to the top it leaves missing that may still fill in; `null`: none. */
  openGap: number | null;
  /**
   * How many records the range set aside (with this answer or before) that the range across one
   * of its edges set aside too (`range-edges.ts`): the run counts them once.
   */
  repeats: number;
}

/** What the settling judgement of a source needs (see `settle.ts`). */
export interface KeySettling {
  /** The settling window, ms; 0: everything read is settled at once. */
  windowMs: number;
  /** When the head was read, if before the answers. */
  headAt: number | undefined;
  /** Gaps at or below it have settled already (`gapFloor`). */
  floor?: number | null | undefined;
}

/** A range read by key, answer after answer. */
export interface KeySource<R extends KeyRead> {
  next(): Promise<KeyStep<R>>;
  /** Ends the range at `upTo` instead (the rest is read as a range of its own): kept only when below the top and above the cursor. */
  cut(upTo: number): boolean;
  /** The range as it stands: its top lowered by {@link cut}. */
  readonly task: Readonly<KeyRangeTask>;
}

/**
 * Reads the range `task` with `read` (the answer after a cursor, its count no more than the range
 * needs up to `upTo`), judging each answer.
 */
export function createKeySource<R extends KeyRead>(input: {
  task: KeyRangeTask;
  read: (cursor: number | null, upTo: number) => Promise<R>;
  settle: KeySettling;
  /** The keyless records where the run's ranges meet; absent: not followed. */
  edges?: RangeEdges | undefined;
}): KeySource<R> {
  const task = { ...input.task };
  const edges = edgeWatch(input.edges, task.after);
  let cursor = task.after;
  // The highest record read so far: the lower neighbour of a gap before the next answer's first.
  let below: SettleMark | null = task.after === null ? null : { rawId: task.after, timestamp: 0 };
  const setAside = keylessOnce();
  return {
    task,
    cut(upTo) {
      if (cursor === null || upTo <= cursor || upTo >= task.upTo) return false;
      task.upTo = upTo;
      return true;
    },
    async next() {
      const read = await input.read(cursor, task.upTo);
      const { served } = read;
      const marks = settleMarks(served).filter((m) => cursor === null || m.rawId > cursor);
      const last = marks.length > 0 ? Math.max(...marks.map((m) => m.rawId)) : null;
      const ends = !served.hasNextPage || (last !== null && last >= task.upTo);
      const top = ends ? task.upTo : Math.min(last ?? task.upTo, task.upTo);
      const rejected = setAside(served, rejectedUpTo(served, task.upTo));
      const from = cursor;
      const step: KeyStep<R> = {
        read,
        proven: { lo: cursor === null ? 0 : cursor + 1, hi: top },
        ends,
        last,
        rejected,
        openGap: gapOf(input.settle, marks, below, read.readAt, top),
        repeats: await edges.step(rejected, () => placesIn(served, from, task.upTo), ends ? task.upTo : null),
      };
      below = marks.find((m) => m.rawId === last) ?? below;
      if (last !== null) cursor = last;
      return step;
    },
  };
}

/** The places in an answer of its first and last records with a rawId after `cursor` up to `upTo`. */
function placesIn(
  served: ServedKeys,
  cursor: number | null,
  upTo: number,
): { first: number; last: number } | undefined {
  const places = keyedPlaces(served).filter((p) => (cursor === null || p.rawId > cursor) && p.rawId <= upTo);
  const first = places[0];
  return first === undefined ? undefined : { first: first.position, last: places.at(-1)!.position };
}

/** What {@link readKeyAfter} needs. */
export interface KeyReadInput {
  fetchKeyPage: FetchKeyPage;
  screen: RawIdScreen;
  spec: StreamSpec;
  /** Records asked per request. Default: the fetch's own. */
  count?: number | undefined;
  /** How often an empty answer that says more follow is asked again before the read fails. Default `EMPTY_ANSWER_RETRY`. */
  emptyRetries?: number | undefined;
  /** Pause before asking an empty answer again, doubled each time. Default `EMPTY_ANSWER_RETRY`. */
  emptyDelayMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * The answer after `cursor` in a range that ends at `upTo`, screened. An empty one that says more
 * follow is asked again, with the full count (a short answer of records it cannot key never moves
 * on), after a pause doubled each time, before the read fails as malformed.
 */
export function readKeyAfter(input: KeyReadInput, cursor: number, upTo: number): Promise<TxKeyPage> {
  return askWhileEmpty({
    ask: async (tries) => {
      const count = tries === 0 ? countUpTo(input.count, cursor, upTo) : input.count;
      const answer = await input.fetchKeyPage(input.spec, { cursor, count });
      return input.screen.screen(answer, { after: cursor, order: 'asc' });
    },
    empty: (served) => !movesOn(served, cursor),
    where: `stream ${streamKey(input.spec)} after rawId ${cursor}`,
    problem: 'empty answer although more records follow',
    retries: input.emptyRetries,
    delayMs: input.emptyDelayMs,
    signal: input.signal,
  });
}

/** Whether an answer moves a walk on: a record after `cursor` (set aside or not), or the list's end. */
export function movesOn(served: ServedKeys, cursor: number): boolean {
  if (!served.hasNextPage || served.txs.some((tx) => tx.rawId > cursor)) return true;
  return served.rejected.some(
    (r) => r.rawId !== undefined && Number.isSafeInteger(r.rawId) && r.rawId > cursor,
  );
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

/** The lowest rawId up to `top` the answer leaves missing that may still fill in (see `settle.ts`). */
function gapOf(
  settle: KeySettling,
  marks: readonly SettleMark[],
  below: SettleMark | null,
  readAt: number,
  top: number,
): number | null {
  if (settle.windowMs <= 0) return null;
  const gap = openGapLow({
    records: below === null ? marks : [...marks, below],
    above: null,
    readAt,
    headAt: settle.headAt,
    windowMs: settle.windowMs,
    floor: settle.floor,
    // The bottom of the list: the rawIds below its first record count too.
    bottom: below === null,
  });
  return gap !== null && gap <= top ? gap : null;
}
