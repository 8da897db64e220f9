/**
 * The store port of the sync engine: a stream's state, its lease, a page's commit and the re-read
 * queue. The ports (this folder) are the seams between the engine (pure paging and re-read logic
 * in `src/sync`) and the outside world: `src/db/stores` implements the stores on
 * PostgreSQL/PGlite, `src/app/sync-adapters.ts` the fetches over the client (`fetches.ts`).
 * Tests may implement them with arrays.
 *
 * Nothing in `src/sync` imports pg, drizzle, bullmq or pino.
 */

import type { WalkCheckpoint } from '../../domain/checkpoints.js';
import type { CommittedPage } from '../../domain/commit-pages.js';
import type { LedgerTx, RejectedRecord } from '../../domain/model.js';
import type { StreamSpec } from '../../domain/stream-key.js';

/** A stream's persisted state as the engine sees it. */
export interface StreamState {
  key: string;
  spec: StreamSpec;
  /**
   * Every record of the stream with `rawId <= watermark` is known to be stored. `null` until the
   * first complete walk ends. Moves only when a walk finishes.
   */
  watermark: number | null;
  /** The walk in progress, or `null` when none is. */
  walk: WalkCheckpoint | null;
  /** Where late arrivals have settled: how far down a tail reads again. */
  settle: SettleState;
}

/** Proof of the right to write a stream's checkpoint: the lease's fencing number. */
export interface StreamLease {
  key: string;
  /** Strictly increasing per stream; a write carrying an older number is refused. */
  fence: number;
  owner: string;
}

/** What one page contributes, committed atomically with the stream's new checkpoint. */
export interface PageCommit {
  lease: StreamLease;
  /**
   * The commit's pages in the order they were fetched, each with every record it served, repeats
   * included: each record is reported with its page, and a repeat whose immutable fields differ
   * from an earlier sighting is a conflict. Its rejected records are reported with the last page
   * (`lastPageOf`).
   */
  pages: ReadonlyArray<CommittedPage>;
  /**
   * The commit's first page, which a walk always gives. The stored checkpoint must lead there (its `nextPage`; page 1 when no walk is stored): otherwise the
   * commit before it is not in the database (lost when the server crashed and came back) and the
   * commit is refused with `CommitLostError`, so the checkpoint never moves past records that are
   * not stored. Absent: not checked.
   */
  fromPage?: number | undefined;
  /**
   * A walk by key: the cursor the commit follows on from (`null`: the walk's first commit, where
   * no checkpoint is stored). The stored checkpoint's `cursor` must be that, else the commit is
   * refused with `CommitLostError`, like {@link fromPage}. Absent: not checked.
   */
  fromCursor?: number | null | undefined;
  /**
   * Wait for this commit to reach the disk, and with it every commit before it (PostgreSQL
   * `synchronous_commit`): the walk's last commit, so a run reports only what a crash cannot take
   * back. Default: the store's setting.
   */
  durable?: boolean | undefined;
  rejected: RejectedRecord[];
  /** The checkpoint after this page; `null` when the walk is finished. */
  walk: WalkCheckpoint | null;
  /** The stream's watermark after this page (unchanged unless the walk finished). */
  watermark: number | null;
  /** The stream's settling state after the walk, on its last commit; absent: unchanged. */
  settle?: SettleState | undefined;
}

/**
 * The proofs a watermark rests on. `floor: null`: every proof of the stream, from rawId 0 (a
 * first backfill). A number: the run `backfillId`'s own proofs above it, the rawIds up to it
 * counting as stored while the stream's settled mark (else its watermark) is still at least it (a
 * catch-up, begun at that mark; a crash that took the mark back takes the floor with it). Below
 * 0 (a repair, `REPAIR_FLOOR`): the run's own proofs from rawId 0, which set the watermark even
 * below the stored one (a phantom record once moved it past the list's head) and end the walk in
 * progress, whose stretch they cover.
 */
export interface ProofScope {
  backfillId: string;
  floor: number | null;
}

/** Counts of what a write did. `unchanged` rows were identical and not rewritten. */
export interface WriteCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  rejected: number;
  /**
   * Sightings whose immutable fields (amount, accounts, token, hash, signature…) differ from the
   * stored record: the stored record is kept and the conflict recorded.
   */
  conflicts: number;
}

/** A stored record that is not final yet and is due for a re-read. */
export interface PendingRecord {
  rawId: number;
  ledgerHash: string;
  /** How many re-reads were already made. */
  attempts: number;
}

/** A due record claimed for a re-read, with where it stands in the lists that could re-read it. */
export interface ClaimedRecord extends PendingRecord {
  /**
   * Records stored above it (larger rawIds): its place in the global list, newest first, as far
   * as the mirror knows. `null` when not asked for, or at least the `rankLimit` asked for.
   */
  listRank: number | null;
  /** The same among the burns (the list `/txs?action=burn`); `null` for other actions. */
  burnRank: number | null;
}

/** How a stream's lease ended: see {@link SyncStore.releaseStream}. */
export type ReleaseOutcome = { ok: true } | { ok: false; error: string; stopped?: boolean };

/** The persistence the sync engine needs. Implemented in `src/db/stores/pg-sync-store.ts`. */
export interface SyncStore {
  /**
   * Takes (or renews) the lease on a stream, creating its row when new, and returns its state.
   * Throws `LeaseLostError` while another owner holds an unexpired lease.
   */
  acquireStream(
    spec: StreamSpec,
    owner: string,
    leaseMs: number,
  ): Promise<{ lease: StreamLease; state: StreamState }>;
  /** Writes a page's records, rejected records and the checkpoint in one transaction; refuses a stale fence. */
  commitPage(commit: PageCommit): Promise<WriteCounts>;
  /**
   * Moves the stream's watermark up to `watermark` (never down, but for a repair's proofs, see
   * {@link ProofScope}), leaving its walk as it is; not a page, so the run's page count is unchanged. Refuses a stale fence like `commitPage`. Options:
   * `settle` stores the stream's settling state too; `proven` moves it only while the proofs it
   * names cover every rawId up to `watermark`, checked in the same statement (a proof read just
   * before may have been taken back by a crash), else throws `CommitLostError`.
   */
  advanceWatermark(
    lease: StreamLease,
    watermark: number,
    options?: { settle?: SettleState | undefined; proven?: ProofScope | undefined },
  ): Promise<void>;
  /**
   * Ends the lease; records the outcome for `status`: a success time, or an error that counts in
   * the stream's error streak. A run stopped by a signal ends its run row as `stopped` and leaves
   * the stream's success time and error streak as they were.
   */
  releaseStream(lease: StreamLease, outcome: ReleaseOutcome): Promise<void>;
  /** Records not final yet whose next re-read is due at `now`, oldest first. */
  duePending(limit: number, now: Date): Promise<PendingRecord[]>;
  /**
   * Claims up to `limit` due records for a re-read: they are not due again for the store's claim
   * length, so runners working at once read each record once; `commitReread` then schedules the
   * next read. With `rankLimit`, each comes with its ranks in the global and the burn list.
   * `dueBy`: records due by this time (default `now`); the claim runs from `now`. `owner`: the
   * claiming one-shot sync's lease owner, kept with the claim until `commitReread`, so a later run
   * that finds it gone can make its records due again at once (`releaseDeadLeases`).
   */
  claimDue(
    limit: number,
    now: Date,
    options?: { rankLimit?: number; dueBy?: Date | undefined; owner?: string | undefined },
  ): Promise<ClaimedRecord[]>;
  /**
   * Stores re-read records (status history included) and schedules the next re-read of those
   * still not final; `missing` are hashes the service no longer knows (404). `seen` are other
   * records a re-read came across (on a list page): those on the re-read queue count as read
   * like `records`; the rest are left alone (new ones are for a stream walk to store).
   */
  commitReread(input: {
    records: LedgerTx[];
    missing: PendingRecord[];
    now: Date;
    seen?: LedgerTx[] | undefined;
  }): Promise<WriteCounts>;
  /**
   * The gaps between stored records of the global list whose missing rawIds lie in
   * `(above, upTo]`, highest first, each with its rank counted among the records stored up to
   * `rankUpTo`. `null` when there are more than `limit`, or no record is stored at or below
   * `above` (the gap below the lowest one has no lower side): a tail by page number then reads
   * the span down to its settled mark to settle it.
   */
  storedGaps(input: {
    above: number;
    upTo: number;
    rankUpTo: number;
    limit: number;
  }): Promise<StoredGap[] | null>;
}

/**
 * A gap in the stored global list: no record stored between `below` and `above`, both stored.
 * `rank`: the records stored above `above` up to the rawId asked (its place in the list, newest
 * first, as the mirror knew it then).
 */
export interface StoredGap {
  below: number;
  above: number;
  rank: number;
}

/** The head a finished walk reached (its newest rawId) and when it was seen (ms). */
export interface SettleHead {
  rawId: number;
  at: number;
}

/** A stream's settling state, as stored with it (see `sync/settle.ts`). */
export interface SettleState {
  /**
   * Every record of the stream with `rawId <= settled` is stored, late ones included: where a
   * tail stops reading. `null` on a mirror from before settling existed: its watermark is trusted.
   */
  settled: number | null;
  /**
   * The oldest head waiting to settle: settled by a later walk that began at least the window
   * after it was seen and read down to `settled`. `null` when nothing waits.
   */
  pending: SettleHead | null;
  /**
   * The heads of later walks waiting too, oldest first, each above the one before: a gap a later
   * walk saw above `pending` settles a window after that walk, not a window after a walk that
   * settled `pending`. Absent (or empty) when none waits but `pending`.
   */
  later?: readonly SettleHead[] | undefined;
}
