/**
 * Inclusive ranges of rawIds and their arithmetic, the one the engine's proofs use: the union of
 * ranges (`mergeRanges`), what they leave of a target (`findGaps`), chunks of a range
 * (`chunkRange`), and how far the proofs reach from rawId 0 (`provenPrefixEnd`).
 */

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

/**
 * Cuts `range` into chunks that end on multiples of `width` (the one holding rawId 0 ends at
 * `width`): chunks of a gap cut later line up with those cut before around it.
 */
export function chunkRange(range: RawIdRange, width: number): RawIdRange[] {
  const step = Math.max(1, Math.floor(width));
  const chunks: RawIdRange[] = [];
  for (let lo = range.lo; lo <= range.hi; ) {
    const hi = Math.min(range.hi, lo === 0 ? step : (Math.floor((lo - 1) / step) + 1) * step);
    chunks.push({ lo, hi });
    lo = hi + 1;
  }
  return chunks;
}

/**
 * The top of the proven stretch that starts at rawId 0, at most `upTo`: every rawId up to it is
 * proven, so a watermark may stand there. `null` when rawId 0 is not proven.
 */
export function provenPrefixEnd(
  proven: readonly RawIdRange[],
  upTo = Number.POSITIVE_INFINITY,
): number | null {
  const first = mergeRanges(proven)[0];
  return first !== undefined && first.lo <= 0 ? Math.min(first.hi, upTo) : null;
}
