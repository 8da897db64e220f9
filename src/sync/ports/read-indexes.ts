/**
 * The read-side indexes a first backfill builds once at its end instead of keeping them up row by
 * row. Implemented in `src/db/schema/deferred-indexes.ts`.
 */
export interface DeferredIndexes {
  /**
   * Drops them when the mirror holds no record yet (and they are not deferred already); returns
   * their names. Never throws: a failure keeps them (and is logged).
   */
  defer(): Promise<string[]>;
  /**
   * Builds those deferred, returning their names (none when nothing was deferred). `whenIdle`: not
   * while a backfill is under way, which builds them when it ends; and a failure is logged, not
   * thrown (they stay deferred for the next run).
   */
  restore(options?: { whenIdle?: boolean }): Promise<string[]>;
  /** The indexes deferred now, by name. */
  pending(): Promise<string[]>;
}

/**
 * Records a second past which a first backfill is bound by its writes rather than its requests.
 * Below it (a budget of up to 200 requests a second by key, 2,000 by page number) the walk waits on
 * its requests, index upkeep costs it no time, and building the indexes at its end would only add
 * to it: 200 ms away, 200,000 records by key took 22.4-22.8 s kept up against 25.7-26.2 s deferred
 * at 100 requests a second, and 19.5-20.0 s against 21.4-21.9 s at 200.
 */
export const DEFER_INDEXES_ABOVE_ROWS_PER_SECOND = 20_000;

/** Whether a first backfill under this request budget (0: none) builds its indexes at its end. */
export function indexesPayToDefer(requestsPerSecond: number | undefined, recordsPerRequest: number): boolean {
  if (requestsPerSecond === undefined || requestsPerSecond <= 0) return true;
  return requestsPerSecond * recordsPerRequest > DEFER_INDEXES_ABOVE_ROWS_PER_SECOND;
}
