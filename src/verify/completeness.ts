/**
 * The completeness proof of a backfill fetched out of order, as pure functions over rawId ranges.
 *
 * Facts about the service it rests on: the list is newest first; new records arrive at the head
 * with larger rawIds; so a page is every record whose rawId lies between its smallest and
 * largest, and two pages fetched one after the other in ascending page order leave nothing
 * between them. Pages fetched in another order can skip what the list shifted past them: those
 * places stay unproven until a sequential walk across them joins both sides.
 */
import { findGaps, mergeRanges, provenPrefixEnd, type RawIdRange } from '../domain/raw-id-ranges.js';

/** One page as fetched: the rawIds it served (newest first) and the page count it reported. */
export interface ObservedPage {
  page: number;
  rawIds: readonly number[];
  totalPages: number;
  /**
   * A page fetched by an earlier attempt, known only by its lowest rawId (a resumed range job):
   * the next page joins to it, but its records are not claimed, since the commit that stored them
   * may have been lost in a crash after the attempt saved its progress.
   */
  anchor?: boolean | undefined;
}

/** Where a page range of the list stands. */
export interface PageRange {
  /** First page, 1-based. */
  from: number;
  /** Last page, inclusive. */
  to: number;
}

/** The verdict on a stream's stored history up to a head. */
export interface CompletenessReport {
  /** Merged ranges in which every record of the service is stored. */
  proven: RawIdRange[];
  /** Ranges below the head that no fetch has covered: records there may be missing. */
  gaps: RawIdRange[];
  /** Everything at or below this rawId is proven stored; `null` while the bottom is unproven. */
  watermark: number | null;
  complete: boolean;
}

/**
 * The ranges proven by pages fetched one after another in ascending page order (one runner, no
 * parallelism within the run). Each page proves its own span; each next page also proves the
 * space between its newest record and the previous page's oldest; a page at or past the last
 * proves that nothing lies below its oldest record.
 */
export function provenByRun(pages: readonly ObservedPage[]): RawIdRange[] {
  const ranges: RawIdRange[] = [];
  let previousLow: number | null = null;
  let previousPage: number | null = null;
  for (const observed of pages) {
    const span = spanOf(observed.rawIds);
    const follows = previousPage !== null && observed.page === previousPage + 1;
    if (observed.anchor) {
      previousLow = span?.lo ?? null;
      previousPage = observed.page;
      continue;
    }
    // The joins stop short of the previous page's oldest record: its own span proves it, where
    // its commit held (an anchor's may not have).
    if (span) {
      ranges.push({ ...span, loPage: observed.page });
      if (follows && previousLow !== null && span.hi < previousLow - 1) {
        ranges.push({ lo: span.hi, hi: previousLow - 1, loPage: observed.page });
      }
    }
    if (observed.page >= observed.totalPages || observed.rawIds.length === 0) {
      // The end of the list: nothing older than what this run saw last.
      const bottomOf = span?.lo ?? (follows && previousLow !== null ? previousLow - 1 : null);
      if (bottomOf !== null && bottomOf >= 0) ranges.push({ lo: 0, hi: bottomOf });
    }
    previousLow = span?.lo ?? previousLow;
    previousPage = observed.page;
  }
  return mergeRanges(ranges);
}

/**
 * The page a repair walk of `gap` starts on: where the record just above the gap was last seen
 * (it can only have moved to later pages since), else `fallback`.
 */
export function repairStartFor(gap: RawIdRange, proven: readonly RawIdRange[], fallback: number): number {
  const above = proven.find((range) => range.lo === gap.hi + 1);
  return above?.loPage ?? fallback;
}

/**
 * Judges a stream's history from rawId 0 up to `head` (the newest record of page 1 when the
 * backfill began). The watermark is the top of the proven range that starts at the bottom, so it
 * never passes an unproven place.
 */
export function judgeCompleteness(proven: readonly RawIdRange[], head: number): CompletenessReport {
  const merged = mergeRanges(proven);
  const gaps = findGaps(merged, { lo: 0, hi: head });
  const watermark = provenPrefixEnd(merged, head);
  return { proven: merged, gaps, watermark, complete: gaps.length === 0 };
}

/**
 * The rawIds missing from `sortedIds` (ascending, distinct) inside the proven ranges: numbers the
 * service never used there, proven absent because the records on both sides were fetched as
 * neighbours. The open space below the oldest record is not reported.
 */
export function findRawIdHoles(sortedIds: readonly number[], proven: readonly RawIdRange[]): RawIdRange[] {
  const holes: RawIdRange[] = [];
  const merged = mergeRanges(proven);
  for (let i = 1; i < sortedIds.length; i++) {
    const below = sortedIds[i - 1] as number;
    const above = sortedIds[i] as number;
    if (above - below <= 1) continue;
    const hole = { lo: below + 1, hi: above - 1 };
    if (merged.some((r) => r.lo <= hole.lo && r.hi >= hole.hi)) holes.push(hole);
  }
  return holes;
}

/** Splits pages `1..totalPages` into consecutive ranges of at most `pagesPerRange` pages. */
export function splitPages(totalPages: number, pagesPerRange: number): PageRange[] {
  const size = Math.max(1, Math.floor(pagesPerRange));
  const ranges: PageRange[] = [];
  for (let from = 1; from <= totalPages; from += size) {
    ranges.push({ from, to: Math.min(totalPages, from + size - 1) });
  }
  return ranges;
}

/**
 * The page to start a repair walk of a gap from, given how many stored records are newer than the
 * gap. They are all still in the live list ahead of the gap (arrivals only add to the head), so
 * the gap's upper neighbour, the oldest of them, sits on this page or a later one.
 */
export function repairStartPage(storedAbove: number, pageSize: number): number {
  return Math.floor(Math.max(0, storedAbove - 1) / pageSize) + 1;
}

function spanOf(rawIds: readonly number[]): RawIdRange | null {
  if (rawIds.length === 0) return null;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const id of rawIds) {
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  return { lo, hi };
}
