/**
 * Where a walk stands, stored with the stream and committed with each batch: a walk by page
 * number ({@link PageCheckpoint}) or by key ({@link KeyCheckpoint}, the one with a `cursor`).
 */
export type WalkCheckpoint = PageCheckpoint | KeyCheckpoint;

/** Whether a checkpoint is a walk by key's ({@link KeyCheckpoint}). */
export function isKeyCheckpoint(walk: WalkCheckpoint): walk is KeyCheckpoint {
  return walk.cursor !== undefined;
}

/** The checkpoint when it is a walk by page number's, else `null`. */
export function asPageCheckpoint(walk: WalkCheckpoint | null | undefined): PageCheckpoint | null {
  return walk === null || walk === undefined || isKeyCheckpoint(walk) ? null : walk;
}

/** What a walk of either dialect is doing. */
interface CheckpointMode {
  /** `backfill`: the whole list, first time. `tail`: from the head down to the watermark. */
  mode: 'backfill' | 'tail';
}

/** Where a walk by page number stands. */
export interface PageCheckpoint extends CheckpointMode {
  /** The next page to fetch (1-based). Resuming there only repeats records, never skips. */
  nextPage: number;
  /** The highest `rawId` seen on page 1 when this walk began; becomes the watermark when it ends. */
  headRawId: number | null;
  /** The largest `totalPages` seen during this walk (it grows while walking). */
  totalPages: number;
  /**
   * When page 1 was read (ms since the epoch): records below the head are settled once read a
   * settling window after it (see `settle.ts`). Absent on checkpoints written before it was kept.
   */
  headAt?: number | undefined;
  cursor?: undefined;
}

/**
 * Where a walk by key (the deployed dialect) stands. Checkpoints stored before the two were told
 * apart also carry `nextPage: 1`, `headRawId: null` and `totalPages: 0`, which nothing reads.
 */
export interface KeyCheckpoint extends CheckpointMode {
  /** The last rawId committed: the next request asks for the records after it. */
  cursor: number;
  /**
   * The lowest rawId missing from what it read that may still fill in (see `settle.ts`), kept
   * across runs; absent when none.
   */
  openGap?: number | undefined;
}
