/**
 * Which requests re-read the records not final yet, planned per run by request count (pure).
 *
 * A list page re-reads ten records for one request, a look-up one: records near the head of the
 * global list (where nearly all waiting records are, since they are recent) are re-read by
 * reading the list down to the deepest of them, burns waiting for their target-chain hash by
 * the burn list (`/txs?action=burn`, where they are ten times denser), and stragglers far down
 * one by one through `/txsByHash`.
 */
import { PAGE_SIZE, REREAD_DEFAULTS } from '../../defaults.js';

import type { StreamSpec } from '../../domain/stream-key.js';

/** A due record and where it stands in the lists (see `ClaimedRecord`). */
export interface RereadCandidate {
  rawId: number;
  /** Records above it in the global list; `null`: unknown or too deep to read by pages. */
  listRank: number | null;
  /** Burns above it in the burn list; `null` for other actions, or too deep. */
  burnRank: number | null;
}

/** The lists a plan may read, and the pages of each already read in this run. */
export interface RereadLists {
  /** Pages 1..N of the global list read in this run (by its tail walk). Default 0. */
  globalPagesRead?: number;
  /** Deepest page worth reading in either list. Default `REREAD_DEFAULTS.maxListPages` (50). */
  maxPages?: number;
}

/** Pages `fromPage..toPage` of one list. */
export interface ListRead {
  list: 'global' | 'burns';
  spec: StreamSpec;
  fromPage: number;
  toPage: number;
}

/** What a run requests to re-read its due records. */
export interface RereadPlan<T extends RereadCandidate> {
  reads: ListRead[];
  /** Records left to single look-ups. */
  lookups: T[];
  /** Requests the plan makes: pages plus look-ups. */
  requests: number;
}

export const BURN_LIST: StreamSpec = { action: 'burn' };

/**
 * The lists a re-read right after a walk of the global list may use: a tail walk read pages 1..N
 * of it just now (a backfill's pages were read long before, and count for nothing).
 */
export function listsAfterWalk(walk: {
  mode: 'backfill' | 'tail';
  pages: number;
  headPages?: number | undefined;
}): RereadLists {
  return { globalPagesRead: walk.mode === 'tail' ? (walk.headPages ?? walk.pages) : 0 };
}

/** The page (1-based) holding the record `rank` records below the head. */
export const pageOf = (rank: number): number => Math.floor(rank / PAGE_SIZE) + 1;

/** The lists a re-read reads, by name. */
export const REREAD_LISTS: Readonly<Record<ListRead['list'], StreamSpec>> = { global: {}, burns: BURN_LIST };
export const LIST_NAMES = Object.keys(REREAD_LISTS) as ListRead['list'][];

/** How far each list moved down (records arrived) since the ranks were counted. */
export type ListShifts = Readonly<Record<ListRead['list'], number>>;
const NO_SHIFT: ListShifts = { global: 0, burns: 0 };

/** A record's rank in a list, `null` when it is not in it or too deep to tell. */
export function rankIn(record: RereadCandidate, list: ListRead['list']): number | null {
  return list === 'global' ? record.listRank : record.burnRank;
}

/** The pages a due record should be on, in each list it is in, within `maxPages`. */
function pagesOf(
  record: RereadCandidate,
  input: { globalPagesRead: number; maxPages: number; shifts: ListShifts },
): Array<{ list: ListRead['list']; page: number }> {
  return LIST_NAMES.flatMap((list) => {
    const rank = rankIn(record, list);
    if (rank === null) return [];
    let page = pageOf(Math.max(0, rank + input.shifts[list]));
    // A due record above the head pages the tail walk read was pushed below them since.
    if (list === 'global') page = Math.max(input.globalPagesRead + 1, page);
    return page <= input.maxPages ? [{ list, page }] : [];
  });
}

/**
 * Which pages of the two lists re-read the records, greedily: the page showing the most records
 * not yet covered first (set cover), while it shows at least two. A page for a single record
 * costs what its look-up costs: it is read within the region already read (up to a page below
 * the deepest chosen), where it also re-reads the other queued records it shows and a record
 * the list moved is on a page read anyway; further down the record is looked up. `skip` are
 * pages not to read again (read already in this run).
 */
function coverByPages<T>(
  placed: ReadonlyArray<{ record: T; pages: ReadonlyArray<{ list: ListRead['list']; page: number }> }>,
  skip: (list: ListRead['list'], page: number) => boolean,
): { pages: Array<{ list: ListRead['list']; page: number }>; rest: T[] } {
  const dense = greedyCover(placed, skip, 2);
  const deepest = (list: ListRead['list']) =>
    Math.max(0, ...dense.pages.filter((p) => p.list === list).map((p) => p.page));
  const left = new Set(dense.rest);
  const near = placed.filter((p) => left.has(p.record));
  const single = greedyCover(near, (list, page) => skip(list, page) || page > deepest(list) + 1, 1);
  return { pages: [...dense.pages, ...single.pages], rest: single.rest };
}

function greedyCover<T>(
  placed: ReadonlyArray<{ record: T; pages: ReadonlyArray<{ list: ListRead['list']; page: number }> }>,
  skip: (list: ListRead['list'], page: number) => boolean,
  minOnPage: number,
): { pages: Array<{ list: ListRead['list']; page: number }>; rest: T[] } {
  const key = (list: string, page: number) => `${list}:${page}`;
  const uncovered = new Set(placed.map((_, i) => i));
  const chosen: Array<{ list: ListRead['list']; page: number }> = [];
  for (;;) {
    const counts = new Map<string, { list: ListRead['list']; page: number; n: number }>();
    for (const i of uncovered) {
      for (const at of placed[i]!.pages) {
        if (skip(at.list, at.page)) continue;
        const entry = counts.get(key(at.list, at.page)) ?? { ...at, n: 0 };
        entry.n++;
        counts.set(key(at.list, at.page), entry);
      }
    }
    let best: { list: ListRead['list']; page: number; n: number } | null = null;
    for (const entry of counts.values()) {
      if (
        best === null ||
        entry.n > best.n ||
        (entry.n === best.n &&
          (entry.list < best.list || (entry.list === best.list && entry.page < best.page)))
      )
        best = entry;
    }
    if (best === null || best.n < minOnPage) break;
    chosen.push({ list: best.list, page: best.page });
    for (const i of [...uncovered])
      if (placed[i]!.pages.some((at) => at.list === best.list && at.page === best.page)) uncovered.delete(i);
  }
  return { pages: chosen, rest: [...uncovered].map((i) => placed[i]!.record) };
}

/** Pages of one list as runs of consecutive pages. */
function asReads(pages: ReadonlyArray<{ list: ListRead['list']; page: number }>): ListRead[] {
  const reads: ListRead[] = [];
  const sorted = [...pages].sort((a, b) => (a.list === b.list ? a.page - b.page : a.list < b.list ? 1 : -1));
  for (const { list, page } of sorted) {
    const last = reads[reads.length - 1];
    if (last && last.list === list && last.toPage === page - 1) last.toPage = page;
    else reads.push({ list, spec: REREAD_LISTS[list], fromPage: page, toPage: page });
  }
  return reads;
}

/**
 * The plan: the pages of the global list and of the burn list that show the due records (a page
 * for each, chosen by most records shown; the pages between them are skipped, their records
 * read recently), and look-ups for records whose place is unknown or deeper than `maxPages`.
 */
export function planRereads<T extends RereadCandidate>(
  due: readonly T[],
  lists: RereadLists = {},
): RereadPlan<T> {
  return placeOnPages(due, {
    globalPagesRead: Math.max(0, lists.globalPagesRead ?? 0),
    maxPages: lists.maxPages ?? REREAD_DEFAULTS.maxListPages,
    shifts: NO_SHIFT,
    skip: () => false,
  });
}

/**
 * Plans the records again once pages showed how far the lists moved (`shifts`); `skip` tells the
 * pages read already in this run, which are not read again (a record placed only there is
 * looked up).
 */
export function placeOnPages<T extends RereadCandidate>(
  records: readonly T[],
  input: {
    globalPagesRead: number;
    maxPages: number;
    shifts: ListShifts;
    skip: (list: ListRead['list'], page: number) => boolean;
  },
): RereadPlan<T> {
  const placed = records.map((record) => ({ record, pages: pagesOf(record, input) }));
  const { pages, rest } = coverByPages(placed, input.skip);
  return { reads: asReads(pages), lookups: rest, requests: pages.length + rest.length };
}

/**
 * How far a list moved down since the ranks were counted, from a page of it read since: the
 * offset of the due records it shows (arrivals push every record down alike), else the least
 * offset that explains why the records expected on it are not there. `null`: nothing to tell.
 */
export function listShift(
  read: { page: number; rawIds: readonly number[] },
  expected: ReadonlyArray<{ rawId: number; rank: number }>,
): number | null {
  const first = (read.page - 1) * PAGE_SIZE;
  const shifts: number[] = [];
  let below = Number.NEGATIVE_INFINITY;
  let above = Number.POSITIVE_INFINITY;
  const lowest = read.rawIds[read.rawIds.length - 1];
  const highest = read.rawIds[0];
  for (const record of expected) {
    const at = read.rawIds.indexOf(record.rawId);
    if (at >= 0) shifts.push(first + at - record.rank);
    else if (lowest !== undefined && record.rawId < lowest)
      below = Math.max(below, first + read.rawIds.length - record.rank);
    else if (highest !== undefined && record.rawId > highest)
      above = Math.min(above, first - 1 - record.rank);
  }
  if (shifts.length > 0) return Math.max(...shifts);
  if (Number.isFinite(below)) return below;
  return Number.isFinite(above) ? above : null;
}
