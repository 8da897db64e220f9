/**
 * Where records sit in a live newest-first list, exactly, from pages read one at a time.
 *
 * Arrivals take rawIds above every record and only push the others down the pages, so the
 * records a list holds at or below a given rawId never change: counted from the newest of them
 * (the top), each one's offset is fixed, while its page position moves with every arrival. A page
 * gives positions from the head; a record's offset is its position minus the top's position at
 * the same moment. The top's position is read again after the page: when it did not move,
 * nothing arrived in between and the offsets are exact.
 */

import { PAGE_SIZE } from '../defaults.js';
import { ListUnsettledError } from '../errors.js';

/** One page of a list, as counting needs it. */
export interface CountedPage {
  /**
   * Its records in the order served (newest first): each one's rawId, or null for a record
   * served without a readable rawId (it still takes its place on the page).
   */
  slots: readonly (number | null)[];
  totalPages: number;
}

/** The readable rawIds of a page, newest first. */
export function readableIds(page: CountedPage): number[] {
  return page.slots.filter((id): id is number => id !== null);
}

/** Reads pages of one list and counts the requests. */
export interface PageReader {
  readonly pageSize: number;
  read(page: number): Promise<CountedPage>;
  requests(): number;
  /** The page count of the latest page read (0 before any). */
  totalPages(): number;
}

export function createPageReader(
  fetchPage: (page: number) => Promise<CountedPage>,
  options: { pageSize?: number | undefined; signal?: AbortSignal | undefined } = {},
): PageReader {
  let requests = 0;
  let totalPages = 0;
  return {
    pageSize: options.pageSize ?? PAGE_SIZE,
    async read(page) {
      options.signal?.throwIfAborted();
      requests += 1;
      const served = await fetchPage(page);
      totalPages = served.totalPages;
      return served;
    },
    requests: () => requests,
    totalPages: () => totalPages,
  };
}

/** The newest record a list holds at or below a rawId, and where it was last seen. */
export interface ListTop {
  rawId: number;
  /** The page it was last seen on. */
  page: number;
  /** Records of the list above it at that read. */
  above: number;
}

/**
 * Finds the newest record at or below `upTo` (`null` when the list holds none), by bisecting the
 * pages: O(log pages) reads. It must be seen with a record above `upTo` just before it, on the
 * same page, or as the first record of a page read after the previous page showed only records
 * above `upTo`: had anything arrived in between, that page would start with one of those.
 */
export async function locateTop(reader: PageReader, upTo: number, maxReads = 64): Promise<ListTop | null> {
  const size = reader.pageSize;
  // Pages 1..lo showed only records above upTo; page hi started at or below it, or was past the end.
  let lo = 0;
  let hi = Number.POSITIVE_INFINITY;
  let next = 1;
  for (let reads = 0; reads < maxReads; reads++) {
    const page = await reader.read(next);
    const slots = page.slots;
    const ids = readableIds(page);
    // Positions count every record, those without a readable rawId too.
    const cut = slots.findIndex((id) => id !== null && id <= upTo);
    if (slots.length === 0) {
      if (next === lo + 1) return null;
      hi = next;
    } else if (cut < 0) {
      if (slots.length < size || next >= page.totalPages) return null;
      lo = next;
    } else if (slots.slice(0, cut).some((id) => id !== null) || next === lo + 1) {
      // A record above upTo just before it (records without a rawId between prove nothing).
      return { rawId: slots[cut]!, page: next, above: (next - 1) * size + cut };
    } else {
      hi = next;
    }
    if (next === 1 && cut < 0 && ids.length > 0) {
      // At most head - upTo records lie above upTo (distinct rawIds), plus any without a rawId.
      const aboveAtMost = ids[0]! - upTo + (slots.length - ids.length);
      hi = Math.min(hi, page.totalPages + 1, Math.floor(aboveAtMost / size) + 2);
    }
    if (hi <= lo + 1) hi = lo + 1;
    next = hi - lo <= 1 ? lo + 1 : Math.floor((lo + hi) / 2);
  }
  throw new ListUnsettledError(`no quiet moment to find the newest record at or below ${upTo}`);
}

/** Reads the top again where it was last seen, following it down the pages as records arrive. */
export async function rereadTop(reader: PageReader, top: ListTop, maxReads = 16): Promise<ListTop> {
  let page = top.page;
  for (let reads = 0; reads < maxReads; reads++) {
    const served = await reader.read(page);
    const at = served.slots.indexOf(top.rawId);
    if (at >= 0) return { rawId: top.rawId, page, above: (page - 1) * reader.pageSize + at };
    const oldest = readableIds(served).at(-1);
    if (oldest === undefined || oldest < top.rawId)
      throw new ListUnsettledError(`record ${top.rawId} is no longer listed where it was (page ${page})`);
    page += 1;
  }
  throw new ListUnsettledError(`record ${top.rawId} was pushed down more than ${maxReads} pages`);
}

/** A page read while the top's position was known exactly. */
export interface MeasuredPage {
  page: number;
  served: CountedPage;
  /** Records of the list above the top when the page was read. */
  topAbove: number;
}

/** The top's latest sighting, moved along as pages are measured. */
export interface TopCursor {
  reader: PageReader;
  top: ListTop;
}

/**
 * Reads the page `choose` picks from the top's latest position, then the top again (unless the
 * page itself shows it): when the top did not move in between, the page's offsets are exact.
 * Otherwise it chooses and reads again, up to `tries` times; from the second try on, the reads
 * that bracket the page follow each other directly, so a quiet moment of two requests suffices.
 */
export async function measurePage(
  cursor: TopCursor,
  choose: (topAbove: number) => number,
  tries = 12,
): Promise<MeasuredPage> {
  const size = cursor.reader.pageSize;
  for (let attempt = 0; attempt < tries; attempt++) {
    const before = cursor.top;
    const page = Math.max(1, choose(before.above));
    const served = await cursor.reader.read(page);
    const at = served.slots.indexOf(before.rawId);
    if (at >= 0) {
      cursor.top = { rawId: before.rawId, page, above: (page - 1) * size + at };
      return { page, served, topAbove: cursor.top.above };
    }
    cursor.top = await rereadTop(cursor.reader, before);
    if (cursor.top.above === before.above) return { page, served, topAbove: before.above };
  }
  throw new ListUnsettledError(`records kept arriving during ${tries} tries to read a page`);
}

/**
 * The offset below the top (records of the list in `(rawId, top]`, those without a readable
 * rawId included) of each readable record of a measured page.
 */
export function offsetsOf(measured: MeasuredPage, pageSize: number): { rawId: number; offset: number }[] {
  const first = (measured.page - 1) * pageSize - measured.topAbove;
  const offsets: { rawId: number; offset: number }[] = [];
  measured.served.slots.forEach((rawId, i) => {
    if (rawId !== null) offsets.push({ rawId, offset: first + i });
  });
  return offsets;
}
