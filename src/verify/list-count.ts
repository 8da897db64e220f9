/**
 * Whether a table holds every record a live list shows at or below a rawId, whatever the list's
 * length, in O(log pages) requests: the list's exact count against the table's and, where they
 * differ, a bisection over the records' offsets (see list-position.ts) that narrows the
 * difference down to a few pages and names the rawIds the table lacks. Given its page reads and
 * its table counts as functions.
 */

import { ListUnsettledError } from '../errors.js';
import {
  type CountedPage,
  createPageReader,
  locateTop,
  measurePage,
  offsetsOf,
  readableIds,
  type TopCursor,
} from './list-position.js';

export interface ListCountPorts {
  fetchPage(page: number): Promise<CountedPage>;
  /**
   * Records of the list the table holds (stored, or set aside as rejected) with a rawId in
   * `(above, atOrBelow]`; `above` null: no lower bound.
   */
  countStored(range: { above: number | null; atOrBelow: number }): Promise<number>;
  /** Which of `rawIds` the table lacks (neither stored nor set aside), ascending. */
  unstored(rawIds: readonly number[]): Promise<number[]>;
}

/**
 * A list's records at or below a rawId against the table's. Its figures add up:
 * `listed = stored + withoutRawId + missing.count - extra`.
 */
export interface ListCount {
  upTo: number;
  /** The newest record listed at or below `upTo`; null when none is (or it could not be found). */
  top: number | null;
  /** Records the list holds at or below `upTo`, those without a readable rawId included; null if not counted. */
  listed: number | null;
  /** Records of the list the table holds at or below `upTo` (stored, or set aside as rejected with their rawId). */
  stored: number;
  /** Records the list held above `upTo` when it was counted. */
  above: number | null;
  /**
   * Records listed at or below `upTo` that the table lacks: how many, and the first rawIds found.
   * Once `nameAtMost` are named, the difference of the segments not read is counted here too.
   */
  missing: { count: number; rawIds: number[] };
  /**
   * Records listed at or below `upTo` without a readable rawId: they cannot be keyed, so no table
   * holds them (a sync keeps their text in `rejected_records`). Counted exactly, by position.
   */
  withoutRawId: number;
  /** Records the table counts as the list's at or below `upTo` that the list does not show. */
  extra: number;
  /** The first of them by rawId, when read by key (a count by page numbers locates them not). */
  extraRawIds?: number[] | undefined;
  /**
   * Records listed at or below `upTo` that the table holds with other immutable fields, when
   * read by key: how many, and the first of them with the fields that differ.
   */
  differing?: { count: number; records: { rawId: number; fields: string[] }[] } | undefined;
  /** Why the count stopped short (its figures are then as far as it got); null when it did not. */
  unsettled: string | null;
  requests: number;
}

/** A record of the list with its offset below the top, and the deficit (listed minus stored) above it. */
interface Point {
  /** Null: below the list's last record. */
  rawId: number | null;
  offset: number;
  deficit: number;
}

interface Tally {
  missing: number[];
  unnamed: number;
  withoutRawId: number;
  extra: number;
}

/** A segment of at most this many records is read record by record. */
const LEAF_RECORDS = 20;
/**
 * A segment is also read whole when it holds at most this many records per record of
 * difference (records without a readable rawId spread over a list): cheaper than bisecting
 * down to each of them.
 */
const RECORDS_PER_DIFFERENCE = 50;
/** ...but never more than this many records at once: a long read under arrivals would not settle. */
const LONGEST_LEAF = 500;

/**
 * Counts the list's records at or below `upTo` (from page 1 and the last page, with the top's
 * position at the same moment) and the table's; where they differ, bisects until `nameAtMost`
 * missing rawIds are named (default 20) and counts the rest.
 */
export async function countList(
  ports: ListCountPorts,
  options: { upTo: number; pageSize?: number; nameAtMost?: number; signal?: AbortSignal | undefined },
): Promise<ListCount> {
  const { upTo } = options;
  const nameAtMost = options.nameAtMost ?? 20;
  const reader = createPageReader(ports.fetchPage, options);
  const stored = await ports.countStored({ above: null, atOrBelow: upTo });
  const tally: Tally = { missing: [], unnamed: 0, withoutRawId: 0, extra: 0 };
  const result = (fields: Pick<ListCount, 'top' | 'listed' | 'above' | 'unsettled'>): ListCount => ({
    upTo,
    stored,
    ...fields,
    missing: {
      count: tally.missing.length + tally.unnamed,
      rawIds: [...tally.missing].sort((a, b) => a - b).slice(0, nameAtMost),
    },
    withoutRawId: tally.withoutRawId,
    extra: tally.extra,
    requests: reader.requests(),
  });
  let cursor: TopCursor;
  let listed: number;
  try {
    const top = await locateTop(reader, upTo);
    if (top === null) {
      tally.extra = stored;
      return result({ top: null, listed: 0, above: null, unsettled: null });
    }
    cursor = { reader, top };
    listed = await countListed(cursor);
  } catch (error) {
    if (!(error instanceof ListUnsettledError)) throw error;
    return result({ top: null, listed: null, above: null, unsettled: error.message });
  }
  const topRawId = cursor.top.rawId;
  const storedAboveTop = upTo > topRawId ? await ports.countStored({ above: topRawId, atOrBelow: upTo }) : 0;
  tally.extra += storedAboveTop;
  const first: Point = { rawId: topRawId, offset: 0, deficit: -storedAboveTop };
  const last: Point = { rawId: null, offset: listed, deficit: listed - stored };
  const unsettled = await bisect(ports, cursor, [first, last], tally, { upTo, nameAtMost });
  return result({ top: topRawId, listed, above: cursor.top.above, unsettled });
}

/** Records at or below the top: the last page read while the top's position is known. */
async function countListed(cursor: TopCursor): Promise<number> {
  const size = cursor.reader.pageSize;
  let lastPage = Math.max(cursor.reader.totalPages(), cursor.top.page);
  for (let tries = 0; tries < 8; tries++) {
    const measured = await measurePage(cursor, () => lastPage);
    const { served, page } = measured;
    const records = served.slots.length;
    if (records > 0 && served.totalPages <= page) return (page - 1) * size + records - measured.topAbove;
    // Not the last page (any more): read the one the answer names, or the one before an empty page.
    lastPage = records === 0 ? Math.min(page - 1, served.totalPages) : served.totalPages;
  }
  throw new ListUnsettledError('its last page kept moving');
}

/**
 * Narrows the deficit between `first` and `last` down, upper segments first, until every
 * segment's deficit is explained (records missing, records without a readable rawId, records the
 * list does not show) or the named rawIds reach `nameAtMost`; the deficit left unexplored then is
 * counted as missing (or extra) without names. Returns why it stopped short, or null.
 */
async function bisect(
  ports: ListCountPorts,
  cursor: TopCursor,
  [first, last]: [Point, Point],
  tally: Tally,
  options: { upTo: number; nameAtMost: number },
): Promise<string | null> {
  const stack: [Point, Point][] = [[first, last]];
  let unsettled: string | null = null;
  while (stack.length > 0) {
    const [upper, lower] = stack.pop()!;
    const deficit = lower.deficit - upper.deficit;
    if (deficit === 0) continue;
    if (unsettled !== null || tally.missing.length >= options.nameAtMost) {
      if (deficit > 0) tally.unnamed += deficit;
      else tally.extra -= deficit;
      continue;
    }
    try {
      const records = lower.offset - upper.offset;
      const leaf = Math.max(LEAF_RECORDS, Math.min(LONGEST_LEAF, RECORDS_PER_DIFFERENCE * Math.abs(deficit)));
      const middle = records > leaf ? await split(ports, cursor, upper, lower, options.upTo) : null;
      if (middle === null) await readLeaf(ports, cursor, upper, lower, tally);
      else stack.push([middle, lower], [upper, middle]);
    } catch (error) {
      if (!(error instanceof ListUnsettledError)) throw error;
      unsettled = error.message;
      stack.push([upper, lower]);
    }
  }
  return unsettled;
}

/** A record of the list between `upper` and `lower`, as near their middle as a page read finds one. */
async function split(
  ports: ListCountPorts,
  cursor: TopCursor,
  upper: Point,
  lower: Point,
  upTo: number,
): Promise<Point> {
  const size = cursor.reader.pageSize;
  const target = Math.floor((upper.offset + lower.offset) / 2);
  const measured = await measurePage(cursor, (topAbove) => Math.floor((topAbove + target) / size) + 1);
  const inside = offsetsOf(measured, size).filter((r) => r.offset > upper.offset && r.offset < lower.offset);
  if (inside.length === 0)
    throw new ListUnsettledError(`no readable record near offset ${target} below the top`);
  const chosen = inside.reduce((best, r) =>
    Math.abs(r.offset - target) < Math.abs(best.offset - target) ? r : best,
  );
  const storedAbove = await ports.countStored({ above: chosen.rawId, atOrBelow: upTo });
  return { rawId: chosen.rawId, offset: chosen.offset, deficit: chosen.offset - storedAbove };
}

/**
 * Reads the list's records in `(lower, upper]` page by page in ascending order (which only
 * repeats, never skips), from the page that holds `upper` at the latest, and names those the
 * table lacks. The segment's records are its offsets' difference (exact), so those without a
 * readable rawId are that minus the readable ones read; the rest of the deficit is records the
 * table counts that the list does not show.
 */
async function readLeaf(
  ports: ListCountPorts,
  cursor: TopCursor,
  upper: Point,
  lower: Point,
  tally: Tally,
): Promise<void> {
  const { reader } = cursor;
  const size = reader.pageSize;
  const top = upper.rawId!;
  const inSegment = (id: number) => id <= top && (lower.rawId === null || id > lower.rawId);
  const listed = new Set<number>();
  let page = Math.floor((cursor.top.above + upper.offset) / size) + 1;
  const maxReads = Math.ceil((lower.offset - upper.offset) / size) + 8;
  for (let reads = 0; ; reads++) {
    if (reads >= maxReads) throw new ListUnsettledError('records kept arriving while a few pages were read');
    const served = await reader.read(page);
    const ids = readableIds(served);
    // Arrivals only push records down: a first page starting below `upper` means the list shrank.
    if (reads === 0 && ids.length > 0 && ids[0]! < top)
      throw new ListUnsettledError(`record ${top} is no longer listed where it was`);
    for (const id of ids.filter(inSegment)) listed.add(id);
    const reachedLower = lower.rawId !== null && ids.some((id) => id <= lower.rawId!);
    if (reachedLower || served.slots.length < size || page >= served.totalPages) break;
    page += 1;
  }
  const records = lower.offset - upper.offset;
  const withoutRawId = records - listed.size;
  if (withoutRawId < 0)
    throw new ListUnsettledError(`records ${top} and below did not stay where they were counted`);
  const unstored = await ports.unstored([...listed]);
  tally.missing.push(...unstored);
  tally.withoutRawId += withoutRawId;
  const storedCounted = records - (lower.deficit - upper.deficit);
  // Never negative: every record of the segment in the table is counted in `storedCounted`.
  tally.extra += storedCounted - (listed.size - unstored.length);
}
