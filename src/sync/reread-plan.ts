/**
 * Which requests re-read the records not final yet, planned per run by request count (pure).
 *
 * A list page re-reads ten records for one request, a look-up one: records near the head of the
 * global list (where nearly all waiting records are, since they are recent) are re-read by
 * reading the list down to the deepest of them, burns waiting for their target-chain hash by
 * the burn list (`/txs?action=burn`, where they are ten times denser), and stragglers far down
 * one by one through `/txsByHash`.
 */
import { PAGE_SIZE } from '../defaults.js';
import type { StreamSpec } from './ports.js';

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
  /** Deepest page worth reading in either list. Default 50. */
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
export function listsAfterWalk(walk: { mode: 'backfill' | 'tail'; pages: number }): RereadLists {
  return { globalPagesRead: walk.mode === 'tail' ? walk.pages : 0 };
}

/** Whether a stream is the whole global list, unfiltered: the one whose ranks the plan uses. */
export function isGlobalList(spec: StreamSpec): boolean {
  return (
    spec.account === undefined &&
    spec.tokenTag === undefined &&
    spec.action === undefined &&
    spec.withoutAction === undefined
  );
}

const pageOf = (rank: number): number => Math.floor(rank / PAGE_SIZE) + 1;

/**
 * The cheapest plan: list depths (for the global list and the burn list) and look-ups that
 * together re-read every due record, fewest requests first, then fewest pages. Records whose
 * place is unknown are looked up.
 */
export function planRereads<T extends RereadCandidate>(
  due: readonly T[],
  lists: RereadLists = {},
): RereadPlan<T> {
  const read = Math.max(0, lists.globalPagesRead ?? 0);
  const maxPages = lists.maxPages ?? 50;
  const placed = due.map((record) => ({
    record,
    global: record.listRank === null ? Number.POSITIVE_INFINITY : Math.max(read + 1, pageOf(record.listRank)),
    burn: record.burnRank === null ? Number.POSITIVE_INFINITY : pageOf(record.burnRank),
  }));
  const depths = (pages: number[], floor: number): number[] =>
    [...new Set([floor, ...pages.filter((p) => p <= maxPages)])].sort((a, b) => a - b);
  const globalDepths = depths(
    placed.map((p) => p.global),
    read,
  );
  const burnDepths = depths(
    placed.map((p) => p.burn),
    0,
  );
  let best = { global: read, burns: 0, requests: Number.POSITIVE_INFINITY, pages: 0 };
  for (const g of globalDepths) {
    for (const b of burnDepths) {
      const pages = g - read + b;
      if (pages >= best.requests) break;
      let lookups = 0;
      for (const p of placed) if (p.global > g && p.burn > b) lookups++;
      const requests = pages + lookups;
      if (requests < best.requests || (requests === best.requests && pages < best.pages))
        best = { global: g, burns: b, requests, pages };
    }
  }
  const reads: ListRead[] = [];
  if (best.global > read) reads.push({ list: 'global', spec: {}, fromPage: read + 1, toPage: best.global });
  if (best.burns > 0) reads.push({ list: 'burns', spec: BURN_LIST, fromPage: 1, toPage: best.burns });
  const lookups = placed.filter((p) => p.global > best.global && p.burn > best.burns).map((p) => p.record);
  return { reads, lookups, requests: best.requests === Number.POSITIVE_INFINITY ? 0 : best.requests };
}
