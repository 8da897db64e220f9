/**
 * Defaults and constants that more than one module relies on, in one place so they cannot drift
 * apart. Imports nothing, so every layer (the pure sync core included) may use it.
 */

/** Records the ledger service serves per list page. */
export const PAGE_SIZE = 10;

/** Records asked a request by key (`count`): the hundred the service's own clients ask for. */
export const KEY_COUNT = 100;

/** Stream lease lengths, ms: how long a runner that stops renewing its lease keeps others out. */
export const LEASE_MS = {
  /** A stream walk of `sync`; every committed page renews it. */
  walk: 120_000,
  /** A worker's stream jobs (`worker --lease-ms`). */
  worker: 60_000,
  /** The completeness check moving a stream's watermark: one write. */
  watermark: 30_000,
} as const;

/** Jobs a worker runs at once per queue (`worker --concurrency`). */
export const WORKER_CONCURRENCY = 4;

/** A worker's BullMQ job lock, ms (`worker --lock-ms`): a killed worker's jobs run again within about this. */
export const JOB_LOCK_MS = 30_000;

/**
 * Pages per range job of a parallel backfill: a range commits in one go at its end, and 32 pages
 * is the batch a walk commits too (20 pages a range: 1.06x the wall time of four workers).
 */
export const PAGES_PER_RANGE = 32;

/**
 * Most pages or answers one transaction takes, by what commits them. Pages by page number: 32 (a
 * default range job, `PAGES_PER_RANGE`, commits in one go). Answers of a range walk by key: 16,
 * which cost PostgreSQL about 5 % less than eight for the same records, the walk's memory a few
 * megabytes more (docs/performance.md). Answers of the walk by key: 8, what arrives while a
 * commit runs (one cursor reads one answer at a time).
 */
export const COMMIT_SIZES = { pages: 32, keyRangeAnswers: 16, keyWalkAnswers: 8 } as const;

/**
 * An empty answer that says more follow (a page before the last, an answer by key after its
 * cursor) is asked again this many times, after a pause doubled each time, before the walk fails.
 */
export const EMPTY_ANSWER_RETRY = { retries: 3, delayMs: 250 } as const;

/** Re-read schedule defaults of records not final yet, for `loadConfig` and the store alike. */
export const REREAD_DEFAULTS = {
  recheckAfterMs: 2_000,
  stragglerAgeMs: 2 * 60_000,
  /** Requests of a re-read in flight at once. */
  concurrency: 4,
  /** The deepest list page a re-read reads; records placed deeper are looked up by hash. */
  maxListPages: 50,
} as const;

/**
 * The settling window, ms (`LEDGER_SETTLE_MS`): a record may become visible this long after a
 * record with a higher rawId was. Spans of the list read sooner after their head was seen are read
 * again by the next tails (see `sync/settle.ts`).
 */
export const SETTLE_MS = 3_000;

/** How old the stored token list (`/info`) may be before a run reads it again, ms. */
export const REFERENCE_REFRESH_MS = 10 * 60_000;

/** Records one scheduled re-read job looks up at most. */
export const REREAD_LIMIT = 500;

/** Request defaults of the client, for `loadConfig` (environment) and `createLedgerClient` (options) alike. */
export const REQUEST_DEFAULTS = {
  timeoutMs: 10_000,
  retries: 5,
  retryMinMs: 200,
  retryMaxMs: 10_000,
  maxRetryWaitMs: 120_000,
  requestsPerSecond: 50,
  /** Largest response body accepted: far above a real page of ten records. */
  maxBodyBytes: 8 * 1024 * 1024,
  /** A list page slower than this multiple of the recent median is requested again. */
  hedgeAfter: 3,
  /** The shortest wait before a list page is requested again. */
  hedgeMinMs: 500,
} as const;

/**
 * The `/metrics` head probe (with `LEDGER_BASE_URL` set): a stream's head seen within this many
 * ms (by any process, or by a walk reading page 1) is not asked again, so Prometheus scraping
 * several targets every 15 s costs the service at most one page-1 request per stream per 5 s.
 */
export const HEAD_PROBE_MAX_AGE_MS = 5_000;

/** How long a scrape waits for the head probe's answers, ms; a slower service leaves the stored heads. */
export const HEAD_PROBE_TIMEOUT_MS = 3_000;
