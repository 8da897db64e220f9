/**
 * Late arrivals: a service whose writes commit out of order can list rawId 101 only after 102
 * (and rawIds have permanent holes, so a gap proves nothing). A record is assumed visible at most
 * a settling window after any record with a higher rawId was. So a span of the list counts as
 * settled (every record in it stored) only when it was read at least that window after a record
 * above it was seen; until then every tail reads it again, down to the stream's settled mark.
 *
 * Pure functions over times and rawIds; the walk feeds them and its last commit stores the result.
 */

/** A stream's settling state, as stored with it. */
export interface SettleState {
  /**
   * Every record of the stream with `rawId <= settled` is stored, late ones included: where a
   * tail stops reading. `null` on a mirror from before settling existed: its watermark is trusted.
   */
  settled: number | null;
  /**
   * The head a finished walk reached and when it was seen (ms): settled by a later walk that
   * began at least the window after it and read down to `settled`. `null` when nothing waits.
   */
  pending: { rawId: number; at: number } | null;
}

/** Where a tail stops reading: the settled mark, or the watermark on a mirror without one. */
export function tailStop(state: { watermark: number | null; settled: number | null }): number | null {
  return state.settled ?? state.watermark;
}

/** Follows one run of a walk: which of its pages were read before their records had settled. */
export interface SettleTracker {
  /** A page accepted at `at` (ms), with its rawIds. */
  accepted(page: number, rawIds: readonly number[], at: number): void;
  /** When page 1 was read (ms), once known: stored in the checkpoint for a walk resumed later. */
  headAt(): number | undefined;
  /**
   * The highest rawId at or below which every record the service lists is stored, as far as this
   * run can tell (`null` when it read nothing): below the lowest missing rawId of the pages read
   * before settling. `toBottom`: the run read to the end of the list (a backfill), so the rawIds
   * below its oldest record count as missing when the last page was read before settling.
   */
  settledBelow(toBottom: boolean): number | null;
}

/**
 * Creates the tracker of a walk's run that starts at `firstPage` at `startedAt`, with at most
 * `width` pages requested ahead of the next one accepted. A page counts as read before settling
 * when it may have been requested before `headAt + windowMs` (the head was seen at `headAt`:
 * page 1's acceptance, or the checkpoint's for a resumed walk; every record below it is visible
 * by then). Only missing rawIds can still fill in: a page read before settling whose rawIds run
 * without a gap holds everything it ever will. Pages of an earlier run of the walk are unknown.
 */
export function createSettleTracker(input: {
  windowMs: number;
  width: number;
  firstPage: number;
  startedAt: number;
  headAt: number | undefined;
}): SettleTracker {
  const { windowMs, width, firstPage } = input;
  let headAt = input.headAt;
  const unsettledUntil = (): number => {
    if (windowMs <= 0) return Number.NEGATIVE_INFINITY;
    return headAt === undefined ? Number.POSITIVE_INFINITY : headAt + windowMs;
  };
  // Pages up to this one may have been requested before the records settled. At the start, the
  // first `width` pages are requested at once.
  let throughPage = input.startedAt < unsettledUntil() ? firstPage + width - 1 : firstPage - 1;
  /** The lowest rawId missing between records read before settling. */
  let missingLow: number | null = null;
  let previousLow: number | null = null;
  let lastUnsettledLow: number | null = null;
  let firstHigh: number | null = null;
  const missing = (rawId: number): void => {
    missingLow = Math.min(missingLow ?? rawId, rawId);
  };
  return {
    accepted(page, rawIds, at) {
      if (page === 1 && headAt === undefined) headAt = at;
      // Until the next acceptance, pages up to `page + width` may be requested.
      if (at < unsettledUntil()) throughPage = Math.max(throughPage, page + width);
      if (rawIds.length === 0) return;
      const ids = [...rawIds].sort((a, b) => b - a);
      const high = ids[0]!;
      const low = ids[ids.length - 1]!;
      if (page === firstPage) firstHigh = high;
      const unsettled = page <= throughPage;
      lastUnsettledLow = unsettled ? low : null;
      if (unsettled) {
        // The space between this page and the one before was read with this page.
        if (previousLow !== null && high < previousLow - 1) missing(high + 1);
        for (let i = 1; i < ids.length; i++) if (ids[i]! < ids[i - 1]! - 1) missing(ids[i]! + 1);
      }
      previousLow = Math.min(previousLow ?? low, low);
    },
    headAt: () => headAt,
    settledBelow(toBottom) {
      if (firstHigh === null) return null;
      let below = firstPage > 1 ? firstHigh : Number.POSITIVE_INFINITY;
      if (missingLow !== null) below = Math.min(below, missingLow - 1);
      // The space below the oldest record listed (rawIds count from 1) may fill in too.
      if (toBottom && lastUnsettledLow !== null && lastUnsettledLow > 1) below = Math.min(below, 0);
      return below;
    },
  };
}

/**
 * The settling state after a finished walk. `base` is what was settled before it: the stored
 * mark, the bottom of the list for a backfill, or the watermark of a mirror without a mark. The
 * pending head is settled when this walk began on page 1 (it read everything down to the mark in
 * this run) at least the window after that head was seen. The walk's new head then waits in turn
 * (an older pending head is kept until settled: it is the one due first).
 */
export function settleAfterWalk(input: {
  state: SettleState & { watermark: number | null };
  mode: 'backfill' | 'tail';
  /** The tracker's `settledBelow` (may be `Infinity`: nothing missing in what it read). */
  settledBelow: number | null;
  /** The run began the walk on page 1 at `startedAt`. */
  fromPageOne: boolean;
  startedAt: number;
  windowMs: number;
  /** The watermark the walk leaves. */
  watermark: number | null;
  /** When the walk saw its head (ms); default `now`. */
  headAt: number | undefined;
  now: number;
}): SettleState {
  const { state, watermark } = input;
  const base = state.settled ?? (input.mode === 'backfill' ? -1 : state.watermark);
  const pending = state.pending;
  const promoted = pending !== null && input.fromPageOne && input.startedAt >= pending.at + input.windowMs;
  let settled = maxOf(base, input.settledBelow, promoted ? pending.rawId : null);
  if (settled !== null && watermark !== null) settled = Math.min(settled, watermark);
  if (watermark === null || (settled !== null && settled >= watermark)) return { settled, pending: null };
  const keep = pending !== null && !promoted && (settled === null || pending.rawId > settled);
  return { settled, pending: keep ? pending : { rawId: watermark, at: input.headAt ?? input.now } };
}

function maxOf(...values: Array<number | null>): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length === 0 ? null : Math.max(...present);
}
