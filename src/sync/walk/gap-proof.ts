/**
 * Settling a span by its gaps: by page number, reading a whole span below the watermark costs a
 * request for every ten records of it, but a record shown late can only appear where the mirror
 * has a gap (every record of the global list visible when the span was read is stored). A page
 * read once the gap's head is a settling window old that lists every record between the gap's two
 * (none, or the ones shown late, stored with it) proves nothing more will fill it. The pages come
 * from the ranks the store counts; pages that show anything else (a record set aside in the gap,
 * the list moved) leave the span to be read whole.
 */
import { PAGE_SIZE } from '../../defaults.js';
import type { LedgerTx, TxPage } from '../../domain/model.js';
import type { StoredGap } from '../ports/sync-store.js';

/** Most pages read to prove a span's gaps; with more, the span is read whole. */
export const MAX_GAP_PAGES = 4;

/**
 * Records that may arrive between the walk's first page and a gap's page: a gap's upper record
 * this close to the end of its page is looked for on the next page too.
 */
export const ARRIVAL_DRIFT = 2;

/**
 * The pages that show each gap, in the order to read them: the page of its upper record, ranked
 * `rank + newRecords` (the records the walk found above the ranks' top), and the next one when
 * that record is among the page's last (arrivals since may push the pair over). `null` when more
 * than `maxPages` would be needed.
 */
export function gapPages(
  gaps: readonly StoredGap[],
  newRecords: number,
  maxPages = MAX_GAP_PAGES,
): number[] | null {
  const pages = new Set<number>();
  for (const gap of gaps) {
    const rank = gap.rank + newRecords;
    const page = Math.floor(rank / PAGE_SIZE) + 1;
    pages.add(page);
    if (rank % PAGE_SIZE >= PAGE_SIZE - 1 - ARRIVAL_DRIFT) pages.add(page + 1);
  }
  if (pages.size > maxPages) return null;
  return [...pages].sort((a, b) => a - b);
}

/** A page as read for the proof: its number and what it served. */
export interface ReadPage {
  page: number;
  served: TxPage;
}

/**
 * Whether the pages, read in ascending order, show every record between the gap's two: one page
 * lists both (any record between them is one shown late, stored with the page), or a full page
 * lists the upper one and the next page, read after it, the lower one, sharing no record (so the
 * list did not move between the two reads: a list only grows, and anything that came above the
 * first page's last record since would have pushed a record of it onto the next page).
 */
export function gapShown(pages: readonly ReadPage[], gap: StoredGap): boolean {
  const inGap = (rawId: number) => rawId > gap.below && rawId < gap.above;
  const setAsideIn = (served: TxPage) => served.rejected.some((r) => r.rawId === undefined || inGap(r.rawId));
  /** Whether `txs` lists, in the gap, records down to the lower one: yes, no, or not on it. */
  const downToLower = (txs: readonly LedgerTx[]): boolean | null => {
    const at = txs.findIndex((tx) => tx.rawId <= gap.below);
    if (!txs.slice(0, at < 0 ? txs.length : at).every((tx) => inGap(tx.rawId))) return false;
    return at < 0 ? null : txs[at]!.rawId === gap.below;
  };
  for (const [i, { page, served }] of pages.entries()) {
    if (setAsideIn(served)) return false;
    const at = served.txs.findIndex((tx) => tx.rawId === gap.above);
    if (at < 0) continue;
    const here = downToLower(served.txs.slice(at + 1));
    if (here !== null) return here;
    const following = pages[i + 1];
    const full = served.txs.length === PAGE_SIZE && served.rejected.length === 0;
    if (!full || following?.page !== page + 1 || following.served.rejected.length > 0) return false;
    const onFirst = new Set(served.txs.map((tx) => tx.rawId));
    if (following.served.txs.some((tx) => onFirst.has(tx.rawId))) return false;
    return downToLower(following.served.txs) === true;
  }
  return false;
}

/**
 * Tells whether every gap is shown closed: by a page the walk read (`seen`, each judged alone),
 * else by the pages that show it (see {@link gapPages}), read one after another. Pages that
 * cannot be read count as not proven.
 */
export async function proveGaps(input: {
  gaps: readonly StoredGap[];
  newRecords: number;
  seen: readonly TxPage[];
  fetchPage: (page: number) => Promise<TxPage>;
  maxPages?: number | undefined;
}): Promise<{ proven: boolean; read: ReadPage[] }> {
  const alone = input.seen.map((served) => [{ page: 0, served }]);
  const gaps = input.gaps.filter((gap) => !alone.some((pages) => gapShown(pages, gap)));
  if (gaps.length === 0) return { proven: true, read: [] };
  const planned = gapPages(gaps, input.newRecords, input.maxPages);
  if (planned === null) return { proven: false, read: [] };
  const read: ReadPage[] = [];
  for (const page of planned) {
    try {
      read.push({ page, served: await input.fetchPage(page) });
    } catch {
      return { proven: false, read };
    }
  }
  return { proven: gaps.every((gap) => gapShown(read, gap)), read };
}
