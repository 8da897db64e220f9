/**
 * A list read by key from a cursor to its end, in order, with as many requests in flight as the
 * reader has lanes: what `verify` compares answer by answer with the table. One cursor has one
 * request in flight: 200 ms away that is five answers a second, a tenth of the default budget.
 * So once the reader knows where the head is (one request for the newest rawId after a few
 * answers that all said more follow) and the stretch up to it is long, the stretch is cut into
 * closed ranges of a few answers each, read at once by the source by key
 * (`src/sync/key-source.ts`), and handed on in order: each range begins right after the top of
 * the one below, so consecutive answers still leave no room for a missing record. Above the head,
 * the open range again, one answer at a time. (The sync engine reads a far stretch in a run's
 * lanes instead, each range committed with its proof as it comes: `src/sync/backfill/`.)
 */
import {
  createKeySource,
  type KeyRead,
  type KeySettling,
  type KeySource,
  type KeyStep,
} from '../../sync/key-source.js';

/** Answers that say more follow, one after the other, before the reader asks where the head is. */
export const BEHIND_AFTER_ANSWERS = 3;
/** Full answers a range of the window spans: short enough to end together, long enough to pay. */
export const WINDOW_RANGE_ANSWERS = 8;

/** What {@link createKeyWindow} needs. */
export interface KeyWindowInput<R extends KeyRead> {
  /** The cursor the reader starts from. */
  from: number;
  /** The answer after a cursor, no more than the range needs up to `upTo` (the source's `read`). */
  read: (cursor: number | null, upTo: number) => Promise<R>;
  settle: KeySettling;
  /** Ranges read at once now; below 2, the reader reads one answer at a time. */
  lanes: () => number;
  /** The newest rawId of the stream, asked once when the reader is behind and no head is known. */
  readHead?: (() => Promise<number | null>) | undefined;
}

/** One answer, in order. */
export interface WindowStep<R extends KeyRead> {
  step: KeyStep<R>;
  /** The checkpoint's cursor after it: every rawId up to it is read. */
  cursor: number;
  /** The list ends with it (nothing follows above the head). */
  ends: boolean;
}

/** A range of the window and the answers read of it, not yet handed on. */
interface WindowRange<R extends KeyRead> {
  source: KeySource<R>;
  steps: KeyStep<R>[];
  failure: { error: unknown } | null;
  wake: (() => void) | null;
}

/** A list read by key in order from a cursor in ranges at once where the head is far. */
export interface KeyWindow<R extends KeyRead> {
  next(): Promise<WindowStep<R>>;
  /** Starts no more reads; reads in flight end unheard. */
  close(): void;
}

/** Creates the window, reading from `input.from`. */
export function createKeyWindow<R extends KeyRead>(input: KeyWindowInput<R>): KeyWindow<R> {
  const { settle } = input;
  let cursor = input.from;
  let open = openRange(input, cursor);
  let head: number | null = null;
  let headAsked = false;
  let behind = 0;
  /** RawIds an answer that says more follow spans (one the service filled), as last measured. */
  let span = 1;
  /** Ranges planned and not yet handed on, lowest first; the first is the next to hand on. */
  const ranges: WindowRange<R>[] = [];
  /** Where the next range to plan begins, and where the window ends. */
  let planned = { from: cursor, upTo: cursor };
  let reading = 0;
  let closed = false;

  const start = (): void => {
    const lanes = input.lanes();
    while (!closed && planned.from < planned.upTo && reading < lanes && ranges.length < 2 * lanes) {
      // Narrower toward the head, a lane's share of what is left: the last ranges end together.
      const share = Math.max(span, Math.floor((planned.upTo - planned.from) / lanes));
      const upTo = Math.min(planned.upTo, planned.from + Math.min(WINDOW_RANGE_ANSWERS * span, share));
      const range: WindowRange<R> = {
        source: createKeySource({ task: { after: planned.from, upTo }, read: input.read, settle }),
        steps: [],
        failure: null,
        wake: null,
      };
      planned = { from: upTo, upTo: planned.upTo };
      ranges.push(range);
      reading++;
      void readRange(range, () => closed).finally(() => {
        reading--;
        start();
      });
    }
  };
  const fromWindow = async (): Promise<WindowStep<R>> => {
    const range = ranges[0]!;
    const step = await takeStep(range);
    if (step.ends) {
      ranges.shift();
      cursor = range.source.task.upTo;
      // The window's last range read: above the head, the open range again, which asks where the
      // head is anew once it is behind again (records kept arriving while the window read).
      if (ranges.length === 0 && planned.from >= planned.upTo) {
        open = openRange(input, cursor);
        head = null;
        headAsked = false;
        behind = 0;
      }
    } else if (step.last !== null) cursor = step.last;
    // Lanes follow the in-flight size as it grows with each answer, not only as ranges end.
    start();
    return { step, cursor, ends: false };
  };
  /** Plans the stretch from the cursor to the head in ranges, when it is long enough to pay. */
  const plan = (): void => {
    if (head === null || input.lanes() < 2 || head - cursor < 2 * WINDOW_RANGE_ANSWERS * span) return;
    planned = { from: cursor, upTo: head };
    start();
  };
  return {
    close() {
      closed = true;
    },
    async next() {
      if (ranges.length > 0) return fromWindow();
      const step = await open.next();
      if (step.last !== null) cursor = step.last;
      if (step.ends) return { step, cursor, ends: true };
      span = Math.max(1, step.proven.hi - step.proven.lo + 1);
      behind++;
      if (head !== null && head <= cursor) head = null;
      if (
        head === null &&
        !headAsked &&
        behind >= BEHIND_AFTER_ANSWERS &&
        input.readHead &&
        input.lanes() >= 2
      ) {
        headAsked = true;
        head = await input.readHead();
      }
      plan();
      return { step, cursor, ends: false };
    },
  };
}

/** Reads a range of the window to its end (or until the window closes), each answer kept until handed on. */
async function readRange<R extends KeyRead>(range: WindowRange<R>, closed: () => boolean): Promise<void> {
  try {
    for (let ends = false; !ends && !closed(); ) {
      const step = await range.source.next();
      range.steps.push(step);
      ends = step.ends;
      range.wake?.();
    }
  } catch (error) {
    range.failure = { error };
    range.wake?.();
  }
}

/** The next answer of a range, once read; throws the failure that ended its reading. */
async function takeStep<R extends KeyRead>(range: WindowRange<R>): Promise<KeyStep<R>> {
  while (range.steps.length === 0) {
    if (range.failure !== null) throw range.failure.error;
    await new Promise<void>((resolve) => {
      range.wake = resolve;
    });
  }
  return range.steps.shift()!;
}

/** The open top range from `after`. */
function openRange<R extends KeyRead>(input: KeyWindowInput<R>, after: number): KeySource<R> {
  return createKeySource({
    task: { after, upTo: Number.POSITIVE_INFINITY },
    read: input.read,
    settle: input.settle,
  });
}
