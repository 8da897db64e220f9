import { PAGE_SIZE } from '../defaults.js';
import type { TxPage } from './model.js';

/** Every `rawId` a page carries, valid and rejected records alike (rejected ones when readable). */
export function pageRawIds(page: TxPage): number[] {
  const ids = page.txs.map((tx) => tx.rawId);
  for (const rejected of page.rejected) {
    if (rejected.rawId !== undefined && Number.isSafeInteger(rejected.rawId)) ids.push(rejected.rawId);
  }
  return ids;
}

/**
 * A page's records in the order served: each one's rawId (a rejected record's too, when
 * readable), null for a record served without a readable rawId. Rejected records whose place
 * on the page is not known follow the others.
 */
export function pageSlots(page: Pick<TxPage, 'txs' | 'rejected'>): (number | null)[] {
  const total = page.txs.length + page.rejected.length;
  const slots: (number | null | undefined)[] = Array.from({ length: total }, () => undefined);
  const unplaced: (number | null)[] = [];
  for (const rejected of page.rejected) {
    const id = rejected.rawId !== undefined && Number.isSafeInteger(rejected.rawId) ? rejected.rawId : null;
    const at = rejected.index;
    if (at !== undefined && at >= 0 && at < total && slots[at] === undefined) slots[at] = id;
    else unplaced.push(id);
  }
  const rest = [...page.txs.map((tx) => tx.rawId), ...unplaced];
  let next = 0;
  return slots.map((slot) => (slot === undefined ? (rest[next++] ?? null) : slot));
}

/** Whether a page holds no record at all, valid or not. */
export function isEmptyPage(page: TxPage): boolean {
  return page.txs.length === 0 && page.rejected.length === 0;
}

/**
 * Whether page `p + 1` provably continues page `p` with nothing skipped, whatever the order in
 * which the two were fetched. The list is newest first and arrivals only ever take rawIds above
 * every existing one, so the records of a page are exactly the list's records within the page's
 * rawId range at the time it was fetched. Two pages therefore leave no hole when their ranges
 * touch: the later page repeats a record (`overlap`) or starts right below the earlier one
 * (`join`, consecutive rawIds). Otherwise (`unproven`) records may have shifted past the boundary
 * between the two fetches and the later page must be fetched again.
 *
 * `previousMin` is the lowest rawId of the earlier page, `null` when it had none readable.
 */
export function linkPages(previousMin: number | null, next: number[]): 'overlap' | 'join' | 'unproven' {
  if (previousMin === null || next.length === 0) return 'unproven';
  const nextMax = Math.max(...next);
  if (nextMax >= previousMin) return 'overlap';
  if (nextMax === previousMin - 1) return 'join';
  return 'unproven';
}

/**
 * The last page a tail walk can need, or `null` when not tailing or the head is not known yet.
 * The records above the watermark number at most `headRawId - watermark` (fewer when rawIds have
 * holes), and those below the lowest rawId accepted so far at most `lowestSeen - watermark - 1`.
 * The walk ends on the page that shows the watermark's record or joins it (its lowest rawId right
 * above the watermark): with every rawId between present, the last of them is the page's lowest;
 * with a hole, one record fewer lies above, and the watermark's record moves up onto that page.
 * So the tighter of the two counts gives the last page, unless records arrived during the walk
 * (then the walk goes on one page at a time).
 */
export function tailPagesAtMost(input: {
  /** The walk's checkpoint (`PageCheckpoint`). */
  walk: { mode: 'backfill' | 'tail'; nextPage: number; headRawId: number | null };
  watermark: number | null;
  /** The lowest rawId on the last accepted page (`walk.nextPage - 1`), `null` when unknown. */
  lowestSeen: number | null;
}): number | null {
  const { walk, watermark, lowestSeen } = input;
  if (walk.mode !== 'tail' || watermark === null || walk.headRawId === null) return null;
  let last = Math.ceil((walk.headRawId - watermark) / PAGE_SIZE);
  if (lowestSeen !== null && walk.nextPage > 1) {
    last = Math.min(last, walk.nextPage - 1 + Math.ceil((lowestSeen - watermark - 1) / PAGE_SIZE));
  }
  return Math.max(1, last);
}

/** Whether two pages carry the same rawIds in the same order (`a` may be absent). */
export function sameIds(a: readonly number[] | null, b: readonly number[]): boolean {
  return a !== null && a.length === b.length && a.every((id, i) => id === b[i]);
}
