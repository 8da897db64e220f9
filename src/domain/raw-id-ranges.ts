/** Inclusive ranges of rawIds and their arithmetic: merging, and the gaps a set of ranges leaves. */

/** An inclusive range of rawIds, `lo <= hi`. */
export interface RawIdRange {
  lo: number;
  hi: number;
  /**
   * The page on which the record at `lo` was seen. Arrivals only push a record to later pages,
   * so it is on this page or a later one now: where a walk down to the space below starts.
   */
  loPage?: number | undefined;
}

/**
 * Sorts and merges ranges that overlap or touch (no integer between them). A merged range keeps
 * the latest page its lowest record was seen on.
 */
export function mergeRanges(ranges: readonly RawIdRange[]): RawIdRange[] {
  const sorted = [...ranges].sort((a, b) => a.lo - b.lo || a.hi - b.hi);
  const merged: RawIdRange[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last && range.lo <= last.hi + 1) {
      last.hi = Math.max(last.hi, range.hi);
      if (range.lo === last.lo && range.loPage !== undefined) {
        last.loPage = Math.max(last.loPage ?? 0, range.loPage);
      }
    } else {
      merged.push(range.loPage === undefined ? { lo: range.lo, hi: range.hi } : { ...range });
    }
  }
  return merged;
}

/** The parts of `target` that no proven range covers. */
export function findGaps(proven: readonly RawIdRange[], target: RawIdRange): RawIdRange[] {
  const gaps: RawIdRange[] = [];
  let cursor = target.lo;
  for (const range of mergeRanges(proven)) {
    if (range.hi < cursor) continue;
    if (range.lo > target.hi) break;
    if (range.lo > cursor) gaps.push({ lo: cursor, hi: Math.min(range.lo - 1, target.hi) });
    cursor = Math.max(cursor, range.hi + 1);
    if (cursor > target.hi) break;
  }
  if (cursor <= target.hi) gaps.push({ lo: cursor, hi: target.hi });
  return gaps;
}
