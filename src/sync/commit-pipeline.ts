/**
 * Pages fetched in order, gathered into batches and committed one batch per transaction, in the
 * order of the pages. Both the stream walk and the range jobs of a parallel backfill commit
 * through it; what a commit writes (records, checkpoint, proofs) is theirs, given as `commit`.
 * A commit starts only after the one before ended, so checkpoints and proofs move in order.
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
   * them rather than wait on (while one runs, nothing could be committed anyway).
   */
  lingered(): boolean;
  /**
   * Starts the linger clock of the next batch now, before its first page arrives (by default it
   * starts with the first page queued).
   */
  openBatch(): void;
  /**
   * Waits for the running commit to end, then hands the queued pages (if any) to the next commit
   * and returns without waiting for it. Throws the failure of a commit before.
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

/** Creates a commit pipeline. `commit` runs once per batch, one at a time. */
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
  /** How long a batch waits for more pages while no commit runs. */
  lingerMs: number;
  /** Clock for the linger. Default `Date.now`. */
  now?: (() => number) | undefined;
}): CommitPipeline<Page> {
  const now = input.now ?? Date.now;
  let batch: Page[] = [];
  let bytes = 0;
  const maxBytes = input.maxBytes ?? BATCH_BYTES;
  const bytesAllowed = typeof maxBytes === 'function' ? maxBytes : () => maxBytes;
  let startedAt: number | null = null;
  let running: Promise<void> | null = null;
  let failure: { error: unknown } | null = null;

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
      return running === null && startedAt !== null && now() - startedAt >= input.lingerMs;
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
      bytes = 0;
      startedAt = null;
      const commit: Promise<void> = input.commit(pages).then(
        () => {
          if (running === commit) running = null;
        },
        (error: unknown) => {
          failure ??= { error };
          if (running === commit) running = null;
        },
      );
      running = commit;
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
