import type { WriteCounts } from './ports/sync-store.js';

/** Counts of a write that did nothing yet. */
export function zeroCounts(): WriteCounts {
  return { inserted: 0, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 };
}

/** Adds `add` into `total`. */
export function addCounts(total: WriteCounts, add: WriteCounts): void {
  total.inserted += add.inserted;
  total.updated += add.updated;
  total.unchanged += add.unchanged;
  total.rejected += add.rejected;
  total.conflicts += add.conflicts;
}
