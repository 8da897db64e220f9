import type { LedgerTx, TxPage } from '../client/types.js';
import { MalformedResponseError } from '../errors.js';
import { isEmptyPage, linkPages, pageRawIds, sameIds, tailPagesAtMost } from './page-links.js';
import type { PageCommit, StreamLease, SyncStore, WalkCheckpoint } from './ports.js';
import { delay, errorText, quietLogger, type SyncLogger } from './sync-logger.js';
import type { WalkResult, WalkStreamInput } from './walk-types.js';
import { addCounts, zeroCounts } from './write-counts.js';

export type { PageEvent, WalkResult, WalkStreamInput } from './walk-types.js';

interface InFlight {
  fetched: Promise<Fetched>;
  /** The answer once it has arrived. */
  result: Fetched | null;
}

interface Fetched {
  page: number;
  /** Fetch issued after the previous page's committed version had been received. */
  ordered: boolean;
  outcome: { ok: true; value: TxPage } | { ok: false; error: unknown };
}

const REGROW_AFTER_PAGES = 16;
/** Link checks remembered to judge whether parallel fetching pays off. */
const LINK_HISTORY = 16;
/** Unproven links among the last {@link LINK_HISTORY} above which the walk goes one page at a time. */
const UNPROVEN_LIMIT = 6;
const DEFAULTS = {
  leaseMs: 120_000,
  concurrency: 4,
  pagesPerCommit: 16,
  commitLingerMs: 200,
  emptyPageRetries: 3,
  emptyPageDelayMs: 250,
};

/**
 * Walks one stream: takes its lease, then backfills (pages 1..totalPages, resuming from the
 * checkpoint) or tails (page 1 down to the watermark) according to its state, committing each
 * page with the next checkpoint in one transaction, in ascending page order. Pages are fetched
 * a few at a time; a page fetched before its predecessor is accepted only when its rawIds prove
 * nothing slipped between the two (see {@link linkPages}), and fetched again otherwise.
 *
 * Fails (checkpoint intact, lease released with the error) when a fetch fails after the client's
 * retries, or a page before `totalPages` stays empty.
 */
export async function walkStream(input: WalkStreamInput): Promise<WalkResult> {
  const { store, fetchPage, spec, owner } = input;
  const leaseMs = input.leaseMs ?? DEFAULTS.leaseMs;
  const now = input.now ?? Date.now;
  const logger = input.logger ?? quietLogger;
  const acquired = await store.acquireStream(spec, owner, leaseMs);
  let lease: StreamLease = acquired.lease;
  let leaseTakenAt = now();
  const { key } = acquired.state;
  const startWalk = (mode: WalkCheckpoint['mode']): WalkCheckpoint => ({
    mode,
    nextPage: 1,
    headRawId: null,
    totalPages: 0,
  });
  let watermark = acquired.state.watermark;
  let walk: WalkCheckpoint = input.full
    ? startWalk('backfill')
    : (acquired.state.walk ?? startWalk(watermark === null ? 'backfill' : 'tail'));
  const result: WalkResult = {
    key,
    mode: walk.mode,
    pages: 0,
    records: 0,
    counts: zeroCounts(),
    refetched: 0,
    watermark,
    finished: false,
  };
  logger.info(
    { stream: key, mode: walk.mode, next_page: walk.nextPage, watermark, total_pages: walk.totalPages },
    'walk starts',
  );

  const maxWindow = Math.max(1, input.concurrency ?? DEFAULTS.concurrency);
  const maxBatch = Math.max(1, input.pagesPerCommit ?? DEFAULTS.pagesPerCommit);
  const lingerMs = input.commitLingerMs ?? DEFAULTS.commitLingerMs;
  let window = 1;
  let calmPages = 0;
  const links: boolean[] = [];
  let acceptedThrough = walk.nextPage - 1;
  let previousMin: number | null = null;
  const inflight = new Map<number, InFlight>();
  let stopped = false;
  const issue = (page: number): void => {
    if (inflight.has(page)) return;
    const ordered = acceptedThrough >= page - 1;
    const entry: InFlight = { result: null, fetched: Promise.resolve(null as never) };
    entry.fetched = fetchPage(spec, page).then(
      (value): Fetched => ({ page, ordered, outcome: { ok: true, value } }),
      (error: unknown): Fetched => ({ page, ordered, outcome: { ok: false, error } }),
    );
    entry.fetched.then((fetched) => {
      entry.result = fetched;
      fillAhead();
    });
    inflight.set(page, entry);
  };
  /**
   * Requests the next page and the pages after it, at most `window` requests unanswered at once.
   * A tail walk needs the pages down to its watermark only: past what the records seen so far
   * allow for, it goes one page at a time.
   */
  const fill = (): void => {
    if (stopped) return;
    issue(walk.nextPage);
    fillAhead();
  };
  /**
   * Requests pages past the next one as earlier requests are answered, up to twice the window
   * ahead, so that a page fetched again or a slow commit does not leave the service idle. The next
   * page itself is requested by the walk only (it may be waiting to fetch it again).
   */
  const fillAhead = (): void => {
    if (stopped || window === 1) return;
    const page = walk.nextPage;
    const tailLast = tailPagesAtMost({ walk, watermark, lowestSeen: previousMin });
    const last = Math.min(Math.max(walk.totalPages, page), tailLast ?? Infinity, page + 2 * window - 1);
    // A slot stays free for the next page while it may still have to be fetched again.
    let unanswered = inflight.get(page)?.result === null ? 0 : 1;
    for (const entry of inflight.values()) if (!entry.result) unanswered++;
    for (let ahead = page + 1; ahead <= last && unanswered < window; ahead++) {
      if (inflight.has(ahead)) continue;
      issue(ahead);
      unanswered++;
    }
  };
  /**
   * After a page fetched again was accepted: the pages ahead that already arrived stay as long as
   * their links prove against it, one after the other; from the first that does not, the arrived
   * ones are dropped and fetched again together rather than one by one as each fails its check.
   */
  const keepProvenAhead = (page: number, pageMin: number | null): void => {
    let min = pageMin;
    for (let ahead = page + 1; ; ahead++) {
      const fetched = inflight.get(ahead)?.result;
      if (!fetched?.outcome.ok || isEmptyPage(fetched.outcome.value)) return;
      const ids = pageRawIds(fetched.outcome.value);
      if (linkPages(min, ids) === 'unproven') {
        for (const [later, entry] of [...inflight])
          if (later >= ahead && entry.result) inflight.delete(later);
        return;
      }
      min = Math.min(...ids);
    }
  };

  /** Waits for a page and checks it: refetches an empty or unproven page, throws a failed fetch. */
  const accept = async (page: number): Promise<TxPage> => {
    let fetched = await take(inflight, page);
    let emptyTries = 0;
    /** The rawIds of the copy whose link was unproven, once the page is being fetched again. */
    let unprovenIds: number[] | null = null;
    for (;;) {
      if (!fetched.outcome.ok) throw fetched.outcome.error;
      const served = fetched.outcome.value;
      if (isEmptyPage(served) && page <= Math.max(walk.totalPages, served.totalPages)) {
        if (emptyTries >= (input.emptyPageRetries ?? DEFAULTS.emptyPageRetries)) {
          throw new MalformedResponseError(
            `stream ${key} page ${page}`,
            `page is empty although the list has ${Math.max(walk.totalPages, served.totalPages)} pages`,
            '',
          );
        }
        logger.warn(
          { stream: key, page, attempt: emptyTries + 1 },
          'empty page before the last one, fetching again',
        );
        await delay((input.emptyPageDelayMs ?? DEFAULTS.emptyPageDelayMs) * 2 ** emptyTries, input.signal);
        emptyTries++;
      } else if (
        !fetched.ordered &&
        !remember(links, linkPages(previousMin, pageRawIds(served)) !== 'unproven')
      ) {
        // Fetched again now that its predecessor is in, the page cannot have skipped anything.
        // The pages ahead stay in flight: a hole in the rawIds explains most unproven links, and
        // then they still continue this page; they are judged once it is back.
        result.refetched++;
        unprovenIds = pageRawIds(served);
        logger.debug({ stream: key, page }, 'page link unproven, fetching again');
        if (links.filter((proven) => !proven).length > UNPROVEN_LIMIT) {
          // Parallel fetches rarely prove their links here (a filtered list without consecutive
          // rawIds, or heavy arrivals): fetch one page at a time for a while.
          window = 1;
          calmPages = -REGROW_AFTER_PAGES;
          links.length = 0;
        }
      } else {
        const ids = unprovenIds && pageRawIds(served);
        // The same records again: nothing moved, the gap was a hole in the rawIds, and the pages
        // ahead are as good as they were. Otherwise the list shifted under them.
        if (ids && !sameIds(unprovenIds, ids))
          keepProvenAhead(page, ids.length > 0 ? Math.min(...ids) : null);
        return served;
      }
      fill();
      fetched = await take(inflight, page);
    }
  };

  let committing: Promise<void> = Promise.resolve();
  let commitDone = true;
  try {
    for (;;) {
      // Accept the pages already fetched in a row, then commit them together: one transaction
      // for several pages keeps the database from being the bottleneck.
      const batch: Array<{ page: number; served: TxPage }> = [];
      let finished = false;
      let failure: { error: unknown } | null = null;
      const batchStartedAt = now();
      for (;;) {
        const page = walk.nextPage;
        fill();
        let served: TxPage;
        try {
          served = await accept(page);
        } catch (error) {
          // Keep what was already fetched in order; the failure surfaces after that commit.
          failure = { error };
          break;
        }
        const ids = pageRawIds(served);
        const totalPages = Math.max(walk.totalPages, served.totalPages);
        const headRawId = walk.headRawId ?? (page === 1 && ids.length > 0 ? Math.max(...ids) : null);
        const reachedWatermark =
          walk.mode === 'tail' && watermark !== null && ids.some((id) => id <= watermark!);
        finished = reachedWatermark || page + 1 > totalPages;
        batch.push({ page, served });
        acceptedThrough = page;
        previousMin = ids.length > 0 ? Math.min(...ids) : null;
        walk = { mode: walk.mode, nextPage: page + 1, headRawId, totalPages };
        if (++calmPages > 0 && window < maxWindow) window = Math.min(maxWindow, window * 2);
        // Rejected records are reported with their page: such a page ends the batch.
        if (finished || batch.length >= maxBatch || served.rejected.length > 0 || input.signal?.aborted)
          break;
        // Wait a little for pages already on their way rather than commit a lone page: fewer,
        // larger transactions. While the previous commit runs, nothing could be committed anyway.
        const next = inflight.get(page + 1);
        if (!next) break;
        if (!next.result && commitDone && now() - batchStartedAt >= lingerMs) break;
      }

      const lastPage = batch[batch.length - 1];
      // Keep the next pages coming while the previous commit ends and this one runs.
      if (!finished && !failure && lastPage) fill();
      await committing;
      if (!lastPage) throw failure?.error;
      // Everything at or below the head seen when the walk began is now stored; -1 marks a stream
      // that was complete while still empty.
      const nextWatermark = finished ? Math.max(watermark ?? -1, walk.headRawId ?? -1) : watermark;
      const commit: PageCommit = {
        lease,
        page: lastPage.page,
        records: distinctByRawId(batch.flatMap((b) => b.served.txs)),
        pages: batch.map((b) => ({ page: b.page, records: b.served.txs })),
        rejected: lastPage.served.rejected,
        walk: finished ? null : walk,
        watermark: nextWatermark,
      };
      const event = {
        key,
        mode: walk.mode,
        page: lastPage.page,
        pages: batch.length,
        totalPages: walk.totalPages,
      };
      const records = batch.reduce((sum, b) => sum + b.served.txs.length, 0);
      // The commit runs while the next pages are accepted; it is awaited before the next one.
      committing = store.commitPage(commit).then((counts) => {
        watermark = nextWatermark;
        result.pages += event.pages;
        result.records += records;
        result.watermark = nextWatermark;
        addCounts(result.counts, counts);
        input.onPage?.({ ...event, records, counts });
      });
      commitDone = false;
      committing.then(
        () => {
          commitDone = true;
        },
        () => {
          commitDone = true;
        },
      );
      if (failure || finished || input.signal?.aborted) await committing;
      if (failure) throw failure.error;
      if (finished) {
        result.finished = true;
        break;
      }
      if (input.signal?.aborted) break;
      if (now() - leaseTakenAt > leaseMs / 3) {
        await committing;
        lease = (await store.acquireStream(spec, owner, leaseMs)).lease;
        leaseTakenAt = now();
      }
    }
  } catch (error) {
    await committing.catch(() => {});
    await releaseQuietly(store, lease, { ok: false, error: errorText(error) }, logger);
    throw error;
  } finally {
    stopped = true;
    inflight.clear();
  }
  await store.releaseStream(lease, { ok: true });
  logger.info(
    {
      stream: key,
      mode: result.mode,
      pages: result.pages,
      records: result.records,
      inserted: result.counts.inserted,
      updated: result.counts.updated,
      rejected: result.counts.rejected,
      refetched: result.refetched,
      watermark: result.watermark,
      finished: result.finished,
    },
    result.finished ? 'walk finished' : 'walk stopped',
  );
  return result;
}

function remember(links: boolean[], proven: boolean): boolean {
  links.push(proven);
  if (links.length > LINK_HISTORY) links.shift();
  return proven;
}

async function take(inflight: Map<number, InFlight>, page: number): Promise<Fetched> {
  const entry = inflight.get(page);
  if (!entry) throw new Error(`page ${page} was never requested`);
  // Stays listed while on its way so that it is not requested a second time meanwhile.
  const fetched = await entry.fetched;
  if (inflight.get(page) === entry) inflight.delete(page);
  return fetched;
}

/** One record per rawId (overlapping pages repeat records), the last sighting kept. */
function distinctByRawId(records: LedgerTx[]): LedgerTx[] {
  const byRawId = new Map<number, LedgerTx>();
  for (const tx of records) byRawId.set(tx.rawId, tx);
  return [...byRawId.values()];
}

async function releaseQuietly(
  store: SyncStore,
  lease: StreamLease,
  outcome: { ok: false; error: string },
  logger: SyncLogger,
): Promise<void> {
  try {
    await store.releaseStream(lease, outcome);
  } catch (error) {
    logger.warn({ stream: lease.key, err: errorText(error) }, 'could not release the stream lease');
  }
}
