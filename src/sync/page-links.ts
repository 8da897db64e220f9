import type { TxPage } from '../client/types.js';

/** Every `rawId` a page carries, valid and rejected records alike (rejected ones when readable). */
export function pageRawIds(page: TxPage): number[] {
  const ids = page.txs.map((tx) => tx.rawId);
  for (const rejected of page.rejected) {
    if (rejected.rawId !== undefined && Number.isSafeInteger(rejected.rawId)) ids.push(rejected.rawId);
  }
  return ids;
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
