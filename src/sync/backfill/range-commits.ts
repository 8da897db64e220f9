import { COMMIT_SIZES } from '../../defaults.js';
import { type ObservedPage, provenByRun } from '../../verify/completeness.js';
import { createCommitPipeline, recordBytes } from '../commit-pipeline.js';
import type { RangePage, RangePageWriter } from '../ports/backfill-store.js';
import type { WriteCounts } from '../ports/sync-store.js';

/** Defaults of a range task's commits: a default range (`PAGES_PER_RANGE`) commits in one go. */
export const RANGE_COMMIT_DEFAULTS = {
  /** Most pages in one transaction. */
  maxPages: COMMIT_SIZES.pages,
  /** How long fetched pages wait for more while no commit runs: fewer, larger transactions. */
  lingerMs: 1000,
};

/** Commits consecutive pages of one range task, several per transaction, one commit at a time. */
export interface RangeCommitter {
  /** Queues a page fetched right after the previous one; starts a commit when the batch is due. */
  add(observed: ObservedPage, page: RangePage): Promise<void>;
  /** Commits what is queued and waits for every commit; throws the first commit failure. */
  flush(): Promise<void>;
  /** Throws the failure of a commit that ran in the background, if any. */
  check(): void;
}

/**
 * Creates the committer of one range task. Pages arrive in ascending order; each batch commits
 * its records with the ranges they prove (joined to the page before the batch, which was fetched
 * just before it) in one transaction. The join proves only the space between the two pages: the
 * page before keeps the proof its own commit stored, which a database crash can take back with its
 * records. `onCommitted` runs after each commit, in order, with the last page it stored.
 */
export function createRangeCommitter(input: {
  writer: RangePageWriter;
  key: string;
  backfillId: string;
  /** The page before the first one added, when an earlier attempt committed it. */
  previous: ObservedPage | null;
  maxPages: number;
  /** A batch waits this long for more pages while no commit is running. */
  lingerMs: number;
  /** After each commit, in order: its last page, what it wrote, and its size. */
  onCommitted: (
    last: ObservedPage,
    counts: WriteCounts,
    batch: { pages: number; records: number },
  ) => Promise<void>;
  now?: () => number;
}): RangeCommitter {
  let before = input.previous;
  const pipeline = createCommitPipeline<QueuedPage>({
    maxPages: input.maxPages,
    // Page records are parsed here (a range by page number is never read ahead).
    sizeOf: (queued) => (Array.isArray(queued.page.records) ? recordBytes(queued.page.records) : 0),
    lingerMs: input.lingerMs,
    now: input.now,
    commit: async (pages) => {
      const joinTo = before;
      const last = pages[pages.length - 1]!.observed;
      before = last;
      const counts = await writeRangePages(input, pages, joinTo);
      const records = pages.reduce((n, p) => n + p.observed.rawIds.length, 0);
      await input.onCommitted(last, counts, { pages: pages.length, records });
    },
  });
  return {
    async add(observed, page) {
      pipeline.check();
      pipeline.add({ observed, page });
      if (pipeline.full() || pipeline.lingered()) await pipeline.submit();
    },
    flush: () => pipeline.flush(),
    check: () => pipeline.check(),
  };
}

interface QueuedPage {
  observed: ObservedPage;
  page: RangePage;
}

/** Writes consecutive pages with the ranges they prove, joined to the page before them. */
async function writeRangePages(
  target: { writer: RangePageWriter; key: string; backfillId: string },
  pages: QueuedPage[],
  joinTo: ObservedPage | null,
): Promise<WriteCounts> {
  const { writer, key, backfillId } = target;
  const observed = pages.map((p) => p.observed);
  const proven = provenByRun(joinTo ? [asAnchor(joinTo), ...observed] : observed);
  return writer.commitRangePages({ key, backfillId, pages: pages.map((p) => p.page), proven });
}

/**
 * The page before a commit, as what the commit may join to: its records were stored by an earlier
 * commit, which a crash may have taken back after it returned (range commits do not wait for the
 * disk), so only the space between the two pages is proven here, never the earlier page's span.
 */
function asAnchor(page: ObservedPage): ObservedPage {
  return page.anchor ? page : { ...page, anchor: true };
}
