import type { WriteObserver } from '../metrics/index.js';
import { REREAD_STREAM } from '../metrics/names.js';
import type { BackfillStore } from '../sync/ports/backfill-store.js';
import type { SyncStore } from '../sync/ports/sync-store.js';

/** The store, telling `observer` what each page commit and re-read wrote. */
export function observeSyncStore(store: SyncStore, observer: WriteObserver): SyncStore {
  return {
    ...store,
    async commitPage(commit) {
      const counts = await store.commitPage(commit);
      observer.written(commit.lease.key, commit.pages?.length ?? 1, counts);
      return counts;
    },
    async commitReread(input) {
      const counts = await store.commitReread(input);
      observer.written(REREAD_STREAM, 0, counts);
      return counts;
    },
  };
}

/** The parallel backfill's store, telling `observer` what each range commit wrote. */
export function observeBackfillStore(store: BackfillStore, observer: WriteObserver): BackfillStore {
  return {
    ...store,
    async commitRangePages(input) {
      const counts = await store.commitRangePages(input);
      observer.written(input.key, input.pages.length, counts);
      return counts;
    },
  };
}
