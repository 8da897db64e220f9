import { type CommitPipeline, createCommitPipeline } from './commit-pipeline.js';
import type { LedgerTx, TxPage } from './model.js';
import type { StreamLease, StreamSpec, SyncStore, WalkCheckpoint } from './ports.js';
import type { WalkResult, WalkStreamInput } from './walk-types.js';
import { addCounts } from './write-counts.js';

/** A page the walk accepted, with the walk's checkpoint after it. */
export interface AcceptedPage {
  page: number;
  served: TxPage;
  walk: WalkCheckpoint;
  /** The walk ends with this page: its commit moves the watermark and clears the walk. */
  finished: boolean;
}

/** A walk's commits: batches of accepted pages, each with its checkpoint, under the stream's lease. */
export interface WalkCommits {
  readonly pipeline: CommitPipeline<AcceptedPage>;
  /** The lease whose fence every commit carries. */
  lease(): StreamLease;
  /** Whether a third of the lease has passed: time to renew it. */
  leaseDue(): boolean;
  /**
   * Takes the lease again (a new fence) once the running commit ended: a commit still carrying
   * the old fence would be refused.
   */
  renewLease(): Promise<void>;
}

/**
 * Creates the commits of one walk. Each commit stores its pages' records (one per rawId), the
 * last page's rejected records and the checkpoint after it; it then adds to `result` (the
 * watermark included) and reports the commit to `onPage`.
 */
export function createWalkCommits(input: {
  store: SyncStore;
  spec: StreamSpec;
  owner: string;
  lease: StreamLease;
  leaseMs: number;
  result: WalkResult;
  onPage: WalkStreamInput['onPage'];
  maxPages: number;
  lingerMs: number;
  now: () => number;
}): WalkCommits {
  const { store, result, now } = input;
  let lease = input.lease;
  let leaseTakenAt = now();

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
      lease,
      page: last.page,
      records: distinctByRawId(pages.flatMap((p) => p.served.txs)),
      pages: pages.map((p) => ({ page: p.page, records: p.served.txs })),
      rejected: last.served.rejected,
      walk: last.finished ? null : last.walk,
      watermark,
    });
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

  const pipeline = createCommitPipeline({ commit, maxPages: input.maxPages, lingerMs: input.lingerMs, now });
  return {
    pipeline,
    lease: () => lease,
    leaseDue: () => now() - leaseTakenAt > input.leaseMs / 3,
    async renewLease() {
      await pipeline.settled();
      lease = (await store.acquireStream(input.spec, input.owner, input.leaseMs)).lease;
      leaseTakenAt = now();
    },
  };
}

/** One record per rawId (overlapping pages repeat records), the last sighting kept. */
function distinctByRawId(records: LedgerTx[]): LedgerTx[] {
  const byRawId = new Map<number, LedgerTx>();
  for (const tx of records) byRawId.set(tx.rawId, tx);
  return [...byRawId.values()];
}
