/**
 * Pages fetched in order, gathered into batches and committed one batch per transaction, in the
 * order of the pages. Both the stream walk and the range jobs of a parallel backfill commit
 * through it; what a commit writes (records, checkpoint, proofs) is theirs, given as `commit`.
 *
 * With one lane (the default) a commit starts only after the one before ended. With more, up to
 * that many commits run at once and may end in any order: the committer must then make each
 * commit's checkpoint count only once every batch before it is in (see `WalkCommits`), and a
 * batch that must see all earlier ones committed is marked to run alone.
 */
export interface CommitPipeline<Page> {
  /** Queues a page after the ones queued before it. */
  add(page: Page): void;
  /** Pages queued and not handed to a commit yet. */
  readonly queued: number;
  /** Whether the queued pages fill a batch. */
  full(): boolean;
  /**
   * Whether the queued pages have waited `lingerMs` for more while a lane was free: then commit
   * them rather than wait on (while every lane is busy, nothing could be committed anyway).
   */
  lingered(): boolean;
  /**
   * Starts the linger clock of the next batch now, before its first page arrives (by default it
   * starts with the first page queued).
   */
  openBatch(): void;
  /**
   * Waits for a free lane (for every lane, when the batch runs alone), then hands the queued
   * pages (if any) to the next commit and returns without waiting for it. Throws the failure of
   * a commit before.
   */
  submit(): Promise<void>;
  /** Waits for every running commit to end; throws the first commit failure. */
  settled(): Promise<void>;
  /** Submits what is queued and waits for every commit to end; throws the first commit failure. */
  flush(): Promise<void>;
  /** Throws the failure of a commit that ran in the background, if any. */
  check(): void;
}

/** The bytes a batch holds at most by default: 8 MiB of records, far above a batch of ordinary ones (about 2.5 MB). */
export const BATCH_BYTES = 8 * 1024 * 1024;

/**
 * About how many bytes records take as text: their `data` (the one field that can be large) and
 * a record's other fields at most.
 */
export function recordBytes(records: readonly { data: string }[]): number {
  let total = 0;
  for (const tx of records) total += tx.data.length + 1024;
  return total;
}

/** Creates a commit pipeline. `commit` runs once per batch, at most `lanes` at a time. */
export function createCommitPipeline<Page>(input: {
  /** Writes one batch (and whatever follows from it); a rejection is kept and thrown later. */
  commit: (pages: Page[]) => Promise<void>;
  /** Most pages in one batch. */
  maxPages: number;
  /**
   * Most bytes in one batch, as `sizeOf` counts them: a batch is full at `maxPages` or at this,
   * whichever comes first, so memory follows bytes, not record counts (a record may hold
   * megabytes of `data`). Read at each check when a function (a share of a limit several
   * pipelines hold together). Default {@link BATCH_BYTES}.
   */
  maxBytes?: number | (() => number) | undefined;
  /** The bytes of one page. Default: none counted (batches full by `maxPages` alone). */
  sizeOf?: ((page: Page) => number) | undefined;
  /** How long a batch waits for more pages while a lane is free. */
  lingerMs: number;
  /** Commits that may run at once. Default 1. */
  lanes?: number | undefined;
  /**
   * A batch that starts only once every commit before it ended, and before which no later one
   * starts (a walk's last batch, which moves the watermark). Default: none.
   */
  runsAlone?: ((pages: readonly Page[]) => boolean) | undefined;
  /** Clock for the linger. Default `Date.now`. */
  now?: (() => number) | undefined;
}): CommitPipeline<Page> {
  const now = input.now ?? Date.now;
  const lanes = Math.max(1, input.lanes ?? 1);
  let batch: Page[] = [];
  let bytes = 0;
  const maxBytes = input.maxBytes ?? BATCH_BYTES;
  const bytesAllowed = typeof maxBytes === 'function' ? maxBytes : () => maxBytes;
  let startedAt: number | null = null;
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const waitForLanes = async (free: number): Promise<void> => {
    while (running.size > lanes - free) await Promise.race(running);
  };

  const pipeline: CommitPipeline<Page> = {
    add(page) {
      if (batch.length === 0 && startedAt === null) startedAt = now();
      batch.push(page);
      bytes += input.sizeOf?.(page) ?? 0;
    },
    get queued() {
      return batch.length;
    },
    full() {
      return batch.length >= input.maxPages || (batch.length > 0 && bytes >= bytesAllowed());
    },
    lingered() {
      return running.size < lanes && startedAt !== null && now() - startedAt >= input.lingerMs;
    },
    openBatch() {
      startedAt = now();
    },
    async submit() {
      const alone = batch.length > 0 && input.runsAlone?.(batch) === true;
      await waitForLanes(alone ? lanes : 1);
      pipeline.check();
      if (batch.length === 0) return;
      const pages = batch;
      batch = [];
      bytes = 0;
      startedAt = null;
      const commit: Promise<void> = input.commit(pages).then(
        () => {
          running.delete(commit);
        },
        (error: unknown) => {
          failure ??= { error };
          running.delete(commit);
        },
      );
      running.add(commit);
      // Nothing after a batch that runs alone starts before it ended.
      if (alone) await commit;
    },
    async settled() {
      await Promise.all(running);
      pipeline.check();
    },
    async flush() {
      await pipeline.submit();
      await pipeline.settled();
    },
    check() {
      if (failure) throw failure.error;
    },
  };
  return pipeline;
}
