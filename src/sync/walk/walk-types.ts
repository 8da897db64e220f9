import type { WalkCheckpoint } from '../../domain/checkpoints.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import type { FetchPage } from '../ports/fetches.js';
import type { SyncStore, WriteCounts } from '../ports/sync-store.js';
import type { SyncLogger } from '../sync-logger.js';
import { zeroCounts } from '../write-counts.js';

/** What `walkStream` needs: the ports, the stream, and how hard to push. */
export interface WalkStreamInput {
  store: SyncStore;
  fetchPage: FetchPage;
  spec: StreamSpec;
  /** Who holds the lease (host, pid, run id): shows in `sync_streams` while the walk runs. */
  owner: string;
  /** Lease length; renewed while the walk goes on. Default 120000. */
  leaseMs?: number;
  /**
   * Most pages in flight at once: a number, or a function read as the walk goes (the client's
   * in-flight size). Default 4. Pages are accepted in ascending order whatever it is.
   */
  concurrency?: number | (() => number);
  /** The most `concurrency` can return, for the settling window's judgement of read times. Default: `concurrency`'s first answer. */
  maxConcurrency?: number;
  /** Start a new backfill from page 1 even when the stream is complete or mid-walk. Default false. */
  full?: boolean;
  /**
   * A tail reads down to the settled mark once a waiting head is a window old, even where the
   * pages that show the span's gaps could settle it (see `gap-proof.ts`). Default false.
   */
  readToMark?: boolean | undefined;
  /** How often an empty page before `totalPages` is fetched again before the walk fails. Default `EMPTY_ANSWER_RETRY`. */
  emptyPageRetries?: number;
  /** Most pages committed in one transaction (pages already fetched in a row). Default 32. */
  pagesPerCommit?: number;
  /** How long a commit may wait for pages already requested to join it. Default 200 ms. */
  commitLingerMs?: number;
  /**
   * The settling window, ms: a span counts as settled only when read this long after its head
   * was seen; a tail reads again down to the stream's settled mark once a waiting head is that
   * old (see `tailReadsToMark`). Default 3000.
   */
  settleMs?: number | undefined;
  /** Pause before refetching an empty page, doubled each time. Default `EMPTY_ANSWER_RETRY`. */
  emptyPageDelayMs?: number;
  /** Once aborted, the walk stops after the page in flight, checkpoint committed. */
  signal?: AbortSignal | undefined;
  /** Called after each committed page (progress bars, metrics). */
  onPage?: ((event: PageEvent) => void) | undefined;
  logger?: SyncLogger | undefined;
  /** Clock, for lease renewal. Default `Date.now`. */
  now?: () => number;
}

/** One commit (one or more pages), as reported to {@link WalkStreamInput.onPage}. */
export interface PageEvent {
  key: string;
  mode: WalkCheckpoint['mode'];
  /** The last page of the commit. */
  page: number;
  /** Pages in the commit. */
  pages: number;
  /** The largest `totalPages` seen so far in this walk. */
  totalPages: number;
  /** Valid records on the commit's pages (repeats included). */
  records: number;
  counts: WriteCounts;
}

/** What one call of `walkStream` did. */
export interface WalkResult {
  key: string;
  mode: WalkCheckpoint['mode'];
  /** Pages committed by this call. */
  pages: number;
  /** Valid records fetched (repeats included). */
  records: number;
  counts: WriteCounts;
  /** Pages fetched again because their link to the previous page could not be proven. */
  refetched: number;
  /**
   * Pages 1..N of the list read last in this call, one after another (what a re-read right after
   * a tail need not read again). Default `pages`.
   */
  headPages?: number | undefined;
  /** The stream's watermark after this call. */
  watermark: number | null;
  /** The walk reached its end (the watermark moved); false when stopped by the signal. */
  finished: boolean;
  /** How the list was read: by page number, or by key (the deployed dialect). Default `page`. */
  dialect?: 'page' | 'key' | undefined;
  /**
   * A tail by key that found its head far (`handOverAnswers`) and read nothing: the newest rawId
   * its head answer showed, where the tail would have begun (its settled mark), and the rawId at
   * or below which the gaps it would read have settled (`gapFloor`: a waiting head that ripened).
   */
  behind?: { head: number; from: number; gapFloor: number | null } | undefined;
}

/** A walk's result before it has read anything. */
export function emptyWalkResult(
  key: string,
  mode: WalkResult['mode'],
  dialect: 'page' | 'key',
  watermark: number | null,
): WalkResult {
  return {
    key,
    mode,
    pages: 0,
    records: 0,
    counts: zeroCounts(),
    refetched: 0,
    watermark,
    finished: false,
    dialect,
  };
}
