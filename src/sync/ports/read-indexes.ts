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
