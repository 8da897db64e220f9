/**
 * Late arrivals: a service whose writes commit out of order can list rawId 101 only after 102
 * (and rawIds have permanent holes, so a gap proves nothing). A record is assumed visible at most
 * a settling window after any record with a higher rawId was. So a span of the list counts as
 * settled (every record in it stored) only when it was read at least that window after a record
 * above it was seen; until then every tail reads it again, down to the stream's settled mark.
 *
 * Pure functions over times and rawIds; the walk feeds them and its last commit stores the result.
 */
import type { RejectedRecord } from '../domain/model.js';
import type { SettleHead, SettleState } from './ports/sync-store.js';

/**
 * Most heads kept waiting. Past it the second oldest is dropped: the gaps below it then wait for
 * the next head above it, which is seen later, so they settle later, never too soon.
 */
export const MAX_WAITING_HEADS = 8;

/** The heads waiting to settle, oldest (and lowest) first. */
function waitingHeads(state: Pick<SettleState, 'pending' | 'later'>): SettleHead[] {
  return state.pending === null ? [] : [state.pending, ...(state.later ?? [])];
}

/** Where a tail stops reading: the settled mark, or the watermark on a mirror without one. */
export function tailStop(state: { watermark: number | null; settled: number | null }): number | null {
  return state.settled ?? state.watermark;
}

/**
 * Whether a tail by page number reads down to the settled mark in this run, rather than only down
 * to its watermark. Reading the span below the watermark proves something only once a waiting
 * head has ripened (a window after it was seen): a record that fills a gap earlier is read by that
 * run all the same. So a tail reads the span only then, or when no head waits (the mark is then
 * the watermark, or trusted in its place); meanwhile it reads what is new, and its gaps wait in
 * turn. By page number every page of the span costs a request; by key the span shares the first
 * answer, and a walk by key reads it every run.
 */
export function tailReadsToMark(input: {
  state: Pick<SettleState, 'pending' | 'later'>;
  fromPageOne: boolean;
  startedAt: number;
  windowMs: number;
}): boolean {
  return input.state.pending === null || promotedHead(input) !== null;
}

/**
 * A page's records as settling sees them: the records it served, and those it set aside with a
 * readable rawId (listed, so no gap; their packaging time unknown).
 */
export function settleMarks(page: {
  txs: ReadonlyArray<SettleMark>;
  rejected: readonly RejectedRecord[];
}): SettleMark[] {
  const marks: SettleMark[] = page.txs.map((tx) => ({ rawId: tx.rawId, timestamp: tx.timestamp }));
  for (const rejected of page.rejected) {
    if (rejected.rawId !== undefined && Number.isSafeInteger(rejected.rawId))
      marks.push({ rawId: rejected.rawId, timestamp: 0 });
  }
  return marks;
}

/** A record as settling sees it: its rawId, and when the service packaged it (0: not yet). */
export interface SettleMark {
  rawId: number;
  timestamp: number;
}

/** How long a service clock may run ahead of ours, ms: a record packaged this long before a read is old. */
export const SERVICE_CLOCK_MARGIN_MS = 5 * 60_000;

/**
 * The lowest rawId still missing from what a read at `readAt` saw that may yet fill in, `null`
 * when every gap it saw has settled. A missing rawId lies below a record `u` that was listed
 * (the record above it on the page, or `above`, the lowest record of the page before): it is
 * visible a settling window after `u` was, and `u` was visible by the time the head was seen
 * (`headAt`) and, once packaged, by its `timestamp` (service clock, allowed `marginMs` of skew).
 * `bottom`: the page is the end of the list, so the rawIds below its oldest record count too.
 * `floor`: the rawIds at or below it have settled already (see {@link gapFloor}); only
 * missing rawIds above it count.
 */
export function openGapLow(input: OpenGapInput): number | null {
  return openGaps(input)?.low ?? null;
}

/** What {@link openGapLow} judges. */
export interface OpenGapInput {
  records: readonly SettleMark[];
  above: SettleMark | null;
  readAt: number;
  headAt: number | undefined;
  windowMs: number;
  marginMs?: number | undefined;
  bottom?: boolean | undefined;
  floor?: number | null | undefined;
}

/**
 * The lowest and the highest rawId still missing that may yet fill in (see {@link openGapLow}),
 * `null` when every gap the read saw has settled.
 */
export function openGaps(input: OpenGapInput): { low: number; high: number } | null {
  const margin = input.marginMs ?? SERVICE_CLOCK_MARGIN_MS;
  const floor = input.floor ?? Number.NEGATIVE_INFINITY;
  const visibleBy = (u: SettleMark): number =>
    Math.min(
      input.headAt ?? Number.POSITIVE_INFINITY,
      u.timestamp > 0 ? u.timestamp + margin : Number.POSITIVE_INFINITY,
    );
  const open = (u: SettleMark): boolean => input.readAt < visibleBy(u) + input.windowMs;
  const sorted = [...input.records].sort((a, b) => b.rawId - a.rawId);
  let gaps: { low: number; high: number } | null = null;
  const missingUpTo = (missing: number, upper: SettleMark) => {
    gaps = { low: missing, high: gaps?.high ?? upper.rawId - 1 };
  };
  let upper = input.above;
  for (const record of sorted) {
    // The lowest rawId of the gap below `upper` that lies above the floor.
    const missing = Math.max(record.rawId, floor) + 1;
    if (upper !== null && missing < upper.rawId && open(upper)) missingUpTo(missing, upper);
    upper = record;
  }
  if (input.bottom && upper !== null && open(upper)) {
    const missing = Math.max(0, floor) + 1;
    if (missing < upper.rawId) missingUpTo(missing, upper);
  }
  return gaps;
}

/**
 * The waiting head a walk settles: the highest of those seen at least the window before the walk
 * began on page 1 (so it reads everything down to the settled mark in this run). Every rawId at
 * or below it has then settled, and the walk's gaps count only above it: with none there, the
 * settled mark moves to the walk's head at once, not to the waiting head for a later run to
 * read again from. `null`: no head is settled by this walk.
 */
export function promotedHead(input: {
  state: Pick<SettleState, 'pending' | 'later'>;
  fromPageOne: boolean;
  startedAt: number;
  windowMs: number;
}): number | null {
  if (!input.fromPageOne) return null;
  let promoted: number | null = null;
  for (const head of waitingHeads(input.state)) {
    if (input.startedAt >= head.at + input.windowMs) promoted = Math.max(promoted ?? head.rawId, head.rawId);
  }
  return promoted;
}

/**
 * The rawId at or below which a walk's gaps do not count: what was settled before it (the stored
 * mark, or on a mirror without one the watermark a tail trusts) or the waiting head it settles
 * ({@link promotedHead}), whichever is higher. A gap there has settled, though the last page of
 * a tail by page number shows it again below the mark.
 */
export function gapFloor(input: {
  state: Pick<SettleState, 'settled' | 'pending' | 'later'> & { watermark: number | null };
  mode: 'backfill' | 'tail';
  fromPageOne: boolean;
  startedAt: number;
  windowMs: number;
}): number | null {
  const { state } = input;
  const base = state.settled ?? (input.mode === 'tail' ? state.watermark : null);
  const promoted = promotedHead(input);
  return base === null ? promoted : Math.max(base, promoted ?? base);
}

/** Follows one run of a walk: which gaps it saw before they could settle. */
export interface SettleTracker {
  /** A page accepted at `at` (ms), with its records. */
  accepted(page: number, records: readonly SettleMark[], at: number): void;
  /** When page 1 was read (ms), once known: stored in the checkpoint for a walk resumed later. */
  headAt(): number | undefined;
  /**
   * The highest rawId at or below which every record the service lists is stored, as far as this
   * run can tell (`null` when it read nothing): below the lowest missing rawId it saw that may
   * still fill in (see {@link openGapLow}). `toBottom`: the run read to the end of the list.
   */
  settledBelow(toBottom: boolean): number | null;
  /** The highest missing rawId this run saw that may still fill in, `null` when none. */
  openHigh(): number | null;
}

/**
 * Creates the tracker of a walk's run that starts at `firstPage` at `startedAt`. A page may have
 * been requested as soon as the page `2 × width` before it was accepted (the window requests up
 * to twice its width ahead), or at the start: that is the read time its gaps are judged by. Pages
 * of an earlier run of the walk are unknown: nothing above this run's first page is settled.
 * `floor`: see {@link gapFloor}; gaps at or below it do not count.
 */
export function createSettleTracker(input: {
  windowMs: number;
  width: number;
  firstPage: number;
  startedAt: number;
  headAt: number | undefined;
  marginMs?: number | undefined;
  floor?: number | null | undefined;
}): SettleTracker {
  const { windowMs, firstPage } = input;
  const lag = 2 * Math.max(1, input.width);
  let headAt = input.headAt;
  const acceptedAt = new Map<number, number>();
  let missingLow: number | null = null;
  let missingHigh: number | null = null;
  let above: SettleMark | null = null;
  let last: { readAt: number; low: SettleMark } | null = null;
  let firstHigh: number | null = null;
  return {
    accepted(page, records, at) {
      if (page === 1 && headAt === undefined) headAt = at;
      acceptedAt.set(page, at);
      acceptedAt.delete(page - lag - 1);
      if (records.length === 0 || windowMs <= 0) return;
      const readAt = acceptedAt.get(page - lag) ?? input.startedAt;
      const gap = openGaps({
        records,
        above,
        readAt,
        headAt,
        windowMs,
        marginMs: input.marginMs,
        floor: input.floor,
      });
      if (gap !== null) {
        missingLow = Math.min(missingLow ?? gap.low, gap.low);
        missingHigh = Math.max(missingHigh ?? gap.high, gap.high);
      }
      const sorted = [...records].sort((a, b) => b.rawId - a.rawId);
      if (page === firstPage) firstHigh = sorted[0]!.rawId;
      const low = sorted[sorted.length - 1]!;
      above = low;
      last = { readAt, low };
    },
    headAt: () => headAt,
    openHigh: () => missingHigh,
    settledBelow(toBottom) {
      if (windowMs <= 0) return Number.POSITIVE_INFINITY;
      if (firstHigh === null) return null;
      let below = firstPage > 1 ? firstHigh : Number.POSITIVE_INFINITY;
      if (missingLow !== null) below = Math.min(below, missingLow - 1);
      if (toBottom && last !== null) {
        const { readAt, low } = last;
        const bottom = openGapLow({
          records: [low],
          above: null,
          readAt,
          headAt,
          windowMs,
          marginMs: input.marginMs,
          bottom: true,
          floor: input.floor,
        });
        if (bottom !== null) below = Math.min(below, bottom - 1);
      }
      return below;
    },
  };
}

/**
 * The settling state after a finished walk. `base` is what was settled before it: the stored
 * mark, the bottom of the list for a backfill, or the watermark of a mirror without a mark. A
 * waiting head is settled when this walk began on page 1 (it read everything down to the mark in
 * this run) at least the window after that head was seen. The walk's new head then waits too,
 * after the heads still waiting (each settles a window after it was seen), unless the walk read
 * from page 1 and saw no gap that may fill in above the newest head still waiting: every rawId at
 * or below that head settles with it, and above it nothing is missing, so a head of its own would
 * only cost a read of the span when it ripened.
 */
export function settleAfterWalk(input: {
  state: SettleState & { watermark: number | null };
  mode: 'backfill' | 'tail';
  /**
   * The tracker's `settledBelow` (may be `Infinity`: nothing missing in what it read), counting
   * only the gaps above {@link gapFloor}.
   */
  settledBelow: number | null;
  /** The run began the walk on page 1 at `startedAt`. */
  fromPageOne: boolean;
  startedAt: number;
  windowMs: number;
  /** The watermark the walk leaves. */
  watermark: number | null;
  /** When the walk saw its head (ms); default `now`. */
  headAt: number | undefined;
  /** A head a window old may settle (the walk read its span, or proved its gaps). Default true. */
  promote?: boolean | undefined;
  /**
   * The tracker's `openHigh`: the highest gap the walk saw that may still fill in (`null`: none).
   * Absent: unknown, and the walk's head waits whenever the mark stays below the watermark.
   */
  openHigh?: number | null | undefined;
  now: number;
}): SettleState {
  const { state, watermark } = input;
  const base = state.settled ?? (input.mode === 'backfill' ? -1 : state.watermark);
  let settled = maxOf(base, input.settledBelow, input.promote === false ? null : promotedHead(input));
  if (settled !== null && watermark !== null) settled = Math.min(settled, watermark);
  if (watermark === null || (settled !== null && settled >= watermark)) return { settled, pending: null };
  const waiting = waitingHeads(state).filter((head) => settled === null || head.rawId > settled);
  const newest = waiting[waiting.length - 1];
  const coveredByNewest =
    newest !== undefined &&
    input.fromPageOne &&
    input.openHigh !== undefined &&
    (input.openHigh === null || input.openHigh <= newest.rawId);
  if ((newest === undefined || newest.rawId < watermark) && !coveredByNewest)
    waiting.push({ rawId: watermark, at: input.headAt ?? input.now });
  while (waiting.length > MAX_WAITING_HEADS) waiting.splice(1, 1);
  const [pending, ...later] = waiting;
  return later.length > 0 ? { settled, pending: pending!, later } : { settled, pending: pending! };
}

function maxOf(...values: Array<number | null>): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length === 0 ? null : Math.max(...present);
}
