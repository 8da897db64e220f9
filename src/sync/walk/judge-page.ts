import type { TxPage } from '../../domain/model.js';
import { isEmptyPage, linkPages, pageRawIds } from '../../domain/page-links.js';

/** How a page fetched by a walk links to the page before it. */
export type PageLink = ReturnType<typeof linkPages>;

/**
 * What a walk does with a page it fetched: `accept` it; `fetch-again` a page fetched before its
 * predecessor whose link to it is unproven; `empty-retry` a page that came back empty although
 * the list reaches past it (`totalPages`, the larger of the walk's and the page's).
 */
export type PageJudgement =
  | { verdict: 'accept'; link: Exclude<PageLink, 'unproven'> | null }
  | { verdict: 'fetch-again'; link: 'unproven' }
  | { verdict: 'empty-retry'; link: null; totalPages: number };

/** A fetched page and what the walk knows of its predecessor. */
export interface PageToJudge {
  page: number;
  served: TxPage;
  /** Fetched after its predecessor had been accepted: nothing can have slipped between them. */
  ordered: boolean;
  /** The largest `totalPages` the walk has seen. */
  totalPages: number;
  /** The lowest rawId of the accepted predecessor, `null` when it had none or is unknown. */
  previousMin: number | null;
}

/**
 * Judges one fetched page. `link` is the link checked against the predecessor, `null` when the
 * page was fetched in order (no check needed). An empty page is judged before its link.
 */
export function judgePage(input: PageToJudge): PageJudgement {
  const { page, served } = input;
  const totalPages = Math.max(input.totalPages, served.totalPages);
  if (isEmptyPage(served) && page <= totalPages) return { verdict: 'empty-retry', link: null, totalPages };
  if (input.ordered) return { verdict: 'accept', link: null };
  const link = linkPages(input.previousMin, pageRawIds(served));
  return link === 'unproven' ? { verdict: 'fetch-again', link } : { verdict: 'accept', link };
}
