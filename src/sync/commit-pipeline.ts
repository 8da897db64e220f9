/**
 * Pages fetched in order, gathered into batches and committed one batch per transaction, one
 * transaction at a time, in the order of the pages. Both the stream walk and the range jobs of
 * a parallel backfill commit through it; what a commit writes (records, checkpoint, proofs) is
 * theirs, given as `commit`.
 */
export interface CommitPipeline<Page> {
  /** Queues a page after the ones queued before it. */
  add(page: Page): void;
  /** Pages queued and not handed to a commit yet. */
  readonly queued: number;
  /** Whether the queued pages fill a batch. */
  full(): boolean;
  /**
   * Whether the queued pages have waited `lingerMs` for more while no commit ran: then commit
   * them rather than wait on (while a commit runs, nothing could be committed anyway).
   */
  lingered(): boolean;
  /**
   * Starts the linger clock of the next batch now, before its first page arrives (by default it
   * starts with the first page queued).
   */
  openBatch(): void;
  /**
   * Waits for the running commit to end, then hands the queued pages (if any) to the next commit
   * and returns without waiting for it. Throws the failure of the commit before.
   */
  submit(): Promise<void>;
  /** Waits for the running commit to end; throws the first commit failure. */
  settled(): Promise<void>;
  /** Submits what is queued and waits for every commit to end; throws the first commit failure. */
  flush(): Promise<void>;
  /** Throws the failure of a commit that ran in the background, if any. */
  check(): void;
}

/** Creates a commit pipeline. `commit` runs once per batch, never two at a time. */
export function createCommitPipeline<Page>(input: {
  /** Writes one batch (and whatever follows from it); a rejection is kept and thrown later. */
  commit: (pages: Page[]) => Promise<void>;
  /** Most pages in one batch. */
  maxPages: number;
  /** How long a batch waits for more pages while no commit runs. */
  lingerMs: number;
  /** Clock for the linger. Default `Date.now`. */
  now?: (() => number) | undefined;
}): CommitPipeline<Page> {
  const now = input.now ?? Date.now;
  let batch: Page[] = [];
  let startedAt: number | null = null;
  let running: Promise<void> = Promise.resolve();
  let idle = true;
  let failure: { error: unknown } | null = null;

  const pipeline: CommitPipeline<Page> = {
    add(page) {
      if (batch.length === 0 && startedAt === null) startedAt = now();
      batch.push(page);
    },
    get queued() {
      return batch.length;
    },
    full() {
      return batch.length >= input.maxPages;
    },
    lingered() {
      return idle && startedAt !== null && now() - startedAt >= input.lingerMs;
    },
    openBatch() {
      startedAt = now();
    },
    async submit() {
      await running;
      pipeline.check();
      if (batch.length === 0) return;
      const pages = batch;
      batch = [];
      startedAt = null;
      idle = false;
      running = input.commit(pages).then(
        () => {
          idle = true;
        },
        (error: unknown) => {
          failure ??= { error };
          idle = true;
        },
      );
    },
    async settled() {
      await running;
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
