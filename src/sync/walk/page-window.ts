import type { TxPage } from '../../domain/model.js';
import { isEmptyPage, linkPages, pageRawIds } from '../../domain/page-links.js';

/** A page a walk requested, once its answer is in. */
export interface FetchedPage {
  page: number;
  /** Requested once the page before it had been accepted: nothing can have slipped between them. */
  ordered: boolean;
  outcome: { ok: true; value: TxPage } | { ok: false; error: unknown };
}

/** Whether a page is requested: `absent` (not), `pending` (no answer yet) or `arrived`. */
export type RequestState = 'absent' | 'pending' | 'arrived';

/** The pages a walk has requested and which to request next. */
export interface PageWindow {
  /** Requests the next page unless it is on its way, then the pages ahead the width allows. */
  fill(): void;
  /** Waits for a requested page's answer and forgets the request; throws when never requested. */
  take(page: number): Promise<FetchedPage>;
  state(page: number): RequestState;
  /** Counts an accepted page: the width doubles with each, up to the most, once the walk is calm. */
  accepted(): void;
  /**
   * Remembers whether a page fetched out of order proved its link. When parallel fetches rarely
   * do (a filtered list without consecutive rawIds, or heavy arrivals), the width drops to one
   * page for a while.
   */
  recordLink(proven: boolean): void;
  /**
   * After a page fetched again was accepted with other records than its unproven copy: the pages
   * ahead that already arrived stay as long as their links prove against it, one after the
   * other; from the first that does not, the arrived ones are dropped, to be fetched again
   * together rather than one by one as each fails its check.
   */
  dropUnprovenAhead(page: number, pageMin: number | null): void;
  /** Requests allowed unanswered at once now. */
  readonly width: number;
  /** Requests nothing more and forgets every request. */
  close(): void;
}

/** Pages a narrowed window waits, one at a time, before it widens again. */
const REGROW_AFTER_PAGES = 16;
/** Link checks remembered to judge whether parallel fetching pays off. */
const LINK_HISTORY = 16;
/** Unproven links among the last {@link LINK_HISTORY} above which the window narrows to one. */
const UNPROVEN_LIMIT = 6;

interface Request {
  fetched: Promise<FetchedPage>;
  /** The answer once it has arrived. */
  result: FetchedPage | null;
}

/**
 * Creates a walk's page window. It starts one page wide. `bounds` tells where the walk stands:
 * the next page it will accept, and the last page worth requesting at all.
 */
export function createPageWindow(input: {
  fetchPage: (page: number) => Promise<TxPage>;
  /** Most requests unanswered at once: a number, or read as it goes (the in-flight size of the client). */
  maxWidth: number | (() => number);
  bounds: () => { next: number; last: number };
}): PageWindow {
  const requests = new Map<number, Request>();
  const links: boolean[] = [];
  const maxWidth = typeof input.maxWidth === 'function' ? input.maxWidth : () => input.maxWidth as number;
  let width = 1;
  let calmPages = 0;
  let closed = false;

  const request = (page: number): void => {
    if (requests.has(page)) return;
    const ordered = page <= input.bounds().next;
    const entry: Request = { result: null, fetched: Promise.resolve(null as never) };
    entry.fetched = input.fetchPage(page).then(
      (value): FetchedPage => ({ page, ordered, outcome: { ok: true, value } }),
      (error: unknown): FetchedPage => ({ page, ordered, outcome: { ok: false, error } }),
    );
    entry.fetched.then((fetched) => {
      entry.result = fetched;
      fillAhead();
    });
    requests.set(page, entry);
  };

  /**
   * Requests pages past the next one as earlier requests are answered, up to twice the width
   * ahead, so that a page fetched again or a slow commit does not leave the service idle. The
   * next page itself is requested by the walk only (it may be waiting to fetch it again).
   */
  const fillAhead = (): void => {
    // The in-flight size may have shrunk since the window widened (a refusal, a faster service).
    width = Math.max(1, Math.min(width, maxWidth()));
    if (closed || width === 1) return;
    const { next, last: lastWanted } = input.bounds();
    const last = Math.min(lastWanted, next + 2 * width - 1);
    // A slot stays free for the next page while it may still have to be fetched again.
    let unanswered = requests.get(next)?.result === null ? 0 : 1;
    for (const entry of requests.values()) if (!entry.result) unanswered++;
    for (let ahead = next + 1; ahead <= last && unanswered < width; ahead++) {
      if (requests.has(ahead)) continue;
      request(ahead);
      unanswered++;
    }
  };

  return {
    fill() {
      if (closed) return;
      request(input.bounds().next);
      fillAhead();
    },
    async take(page) {
      const entry = requests.get(page);
      if (!entry) throw new Error(`page ${page} was never requested`);
      // Stays listed while on its way so that it is not requested a second time meanwhile.
      const fetched = await entry.fetched;
      if (requests.get(page) === entry) requests.delete(page);
      return fetched;
    },
    state(page) {
      const entry = requests.get(page);
      return !entry ? 'absent' : entry.result ? 'arrived' : 'pending';
    },
    accepted() {
      const most = Math.max(1, maxWidth());
      if (++calmPages > 0 && width < most) width = Math.min(most, width * 2);
    },
    recordLink(proven) {
      links.push(proven);
      if (links.length > LINK_HISTORY) links.shift();
      if (!proven && links.filter((p) => !p).length > UNPROVEN_LIMIT) {
        width = 1;
        calmPages = -REGROW_AFTER_PAGES;
        links.length = 0;
      }
    },
    dropUnprovenAhead(page, pageMin) {
      const from = firstUnprovenAhead(requests, page, pageMin);
      if (from === null) return;
      for (const [later, entry] of [...requests]) if (later >= from && entry.result) requests.delete(later);
    },
    get width() {
      return width;
    },
    close() {
      closed = true;
      requests.clear();
    },
  };
}

/**
 * The first page after `page` that arrived and does not prove its link to the page before it,
 * checking the arrived pages one after the other; `null` when the run of arrived pages ends first.
 */
function firstUnprovenAhead(
  requests: Map<number, Request>,
  page: number,
  pageMin: number | null,
): number | null {
  let min = pageMin;
  for (let ahead = page + 1; ; ahead++) {
    const fetched = requests.get(ahead)?.result;
    if (!fetched?.outcome.ok || isEmptyPage(fetched.outcome.value)) return null;
    const ids = pageRawIds(fetched.outcome.value);
    if (linkPages(min, ids) === 'unproven') return ahead;
    min = Math.min(...ids);
  }
}
