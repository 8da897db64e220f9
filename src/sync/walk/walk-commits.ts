import type { PageCheckpoint } from '../../domain/checkpoints.js';
import type { TxPage } from '../../domain/model.js';
import { type CommitPipeline, createCommitPipeline, recordBytes } from '../commit-pipeline.js';
import type { SettleState, SyncStore } from '../ports/sync-store.js';
import type { StreamSession } from '../stream-session.js';
import { addCounts } from '../write-counts.js';
import type { WalkResult, WalkStreamInput } from './walk-types.js';

/** A page the walk accepted, with the walk's checkpoint after it. */
export interface AcceptedPage {
  page: number;
  served: TxPage;
  walk: PageCheckpoint;
  /** The walk ends with this page: its commit moves the watermark and clears the walk. */
  finished: boolean;
}

/** A walk's commits: batches of accepted pages, each with its checkpoint, under the stream's lease. */
export interface WalkCommits {
  readonly pipeline: CommitPipeline<AcceptedPage>;
  /**
   * Renews the lease when due (a new fence), once the running commits ended: a commit still
   * carrying the old fence would be refused.
   */
  renewLease(): Promise<void>;
}

/** What {@link createWalkCommits} takes. */
export interface WalkCommitsInput {
  store: SyncStore;
  /** The walk's lease: every commit carries the fence held now. */
  session: StreamSession;
  result: WalkResult;
  onPage: WalkStreamInput['onPage'];
  maxPages: number;
  lingerMs: number;
  /** The stream's settling state once the walk ends with a watermark, written by its last commit. */
  settle?: ((watermark: number | null) => SettleState) | undefined;
  /**
   * The page the stored checkpoint leads to: the first commit follows on from it, whether the
   * walk continues it or starts again from page 1 (`full`, a walk by key left behind).
   */
  storedNextPage?: number | undefined;
  now: () => number;
}

/**
 * Creates the commits of one walk, one after the other. Each commit stores its pages' records (one
 * per rawId), the last page's rejected records and the checkpoint after it; it then adds to
 * `result` (the watermark included) and reports the commit to `onPage`.
 */
export function createWalkCommits(input: WalkCommitsInput): WalkCommits {
  const { store, result, now, session } = input;
  let storedNextPage = input.storedNextPage;

  const commit = async (pages: AcceptedPage[]): Promise<void> => {
    // A page with rejected records ends its batch: they are reported with the last page.
    const last = pages[pages.length - 1]!;
    // Everything at or below the head seen when the walk began is now stored; -1 marks a stream
    // that was complete while still empty.
    const watermark = last.finished
      ? Math.max(result.watermark ?? -1, last.walk.headRawId ?? -1)
      : result.watermark;
    const records = pages.reduce((sum, p) => sum + p.served.txs.length, 0);
    const counts = await store.commitPage({
      lease: session.lease(),
      fromPage: storedNextPage ?? pages[0]!.page,
      // The last commit waits for the disk, and with it every commit before it: what the run
      // reports as stored, a crash cannot take back.
      durable: last.finished,
      pages: pages.map((p) => ({ page: p.page, records: p.served.txs })),
      rejected: last.served.rejected,
      walk: last.finished ? null : last.walk,
      watermark,
      settle: last.finished ? input.settle?.(watermark) : undefined,
    });
    storedNextPage = undefined;
    result.watermark = watermark;
    result.pages += pages.length;
    result.records += records;
    addCounts(result.counts, counts);
    input.onPage?.({
      key: result.key,
      mode: last.walk.mode,
      page: last.page,
      pages: pages.length,
      totalPages: last.walk.totalPages,
      records,
      counts,
    });
  };

  const pipeline = createCommitPipeline<AcceptedPage>({
    commit,
    maxPages: input.maxPages,
    sizeOf: (accepted) => recordBytes(accepted.served.txs),
    lingerMs: input.lingerMs,
    now,
  });
  return { pipeline, renewLease: () => session.renew(() => pipeline.settled()) };
}
