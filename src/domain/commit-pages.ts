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
