/**
 * The pages a commit carries, as the engine hands them to a store and the store reads them:
 * records parsed by the walk, or held by the store that read them itself.
 */
import type { LedgerTx } from './model.js';

/** One page of a walk's commit (`PageCommit`): its number (1-based, or an answer's index by key) and what it served. */
export interface CommittedPage {
  page: number;
  records: readonly LedgerTx[];
}

/** The page a commit's rejected records are reported with: its last one (page 1 when it has none). */
export function lastPageOf(commit: { pages: ReadonlyArray<Pick<CommittedPage, 'page'>> }): number {
  return commit.pages.at(-1)?.page ?? 1;
}

/**
 * An answer's records as the store read them itself (`readAhead`), passed back to it by value
 * with their commit: their rawIds for the walk, and the store's reading of them, which the walk
 * does not open.
 */
export interface HeldRecords {
  readonly held: true;
  /** Ascending. */
  readonly rawIds: readonly number[];
  /** What the store made of the answer (PostgreSQL: the records' encoding and the answer). */
  readonly reading: unknown;
}

/** Whether a page's records are held by the store (`readAhead`) rather than parsed by the walk. */
export function isHeld(records: readonly LedgerTx[] | HeldRecords): records is HeldRecords {
  return !Array.isArray(records);
}
