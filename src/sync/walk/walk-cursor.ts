import { asPageCheckpoint, type PageCheckpoint } from '../../domain/checkpoints.js';
import type { TxPage } from '../../domain/model.js';
import { pageRawIds, tailPagesAtMost } from '../../domain/page-links.js';
import type { StreamState } from '../ports/sync-store.js';

/** Where a walk stands: its checkpoint, and the lowest rawId of the page it accepted last. */
export interface WalkCursor {
  walk: PageCheckpoint;
  /** `null` before the first page accepted by this call, or when that page had no rawId. */
  previousMin: number | null;
}

/**
 * Where a walk starts: the stream's walk in progress, else a backfill (never completed) or a tail
 * from page 1; `full` starts a new backfill whatever the state.
 */
export function startCursor(state: Pick<StreamState, 'walk' | 'watermark'>, full: boolean): WalkCursor {
  const fresh = (mode: PageCheckpoint['mode']): PageCheckpoint => ({
    mode,
    nextPage: 1,
    headRawId: null,
    totalPages: 0,
  });
  // A walk by key left by a run in the other dialect is not continued: its pages mean nothing here.
  const stored = asPageCheckpoint(state.walk);
  const walk = full ? fresh('backfill') : (stored ?? fresh(state.watermark === null ? 'backfill' : 'tail'));
  return { walk, previousMin: null };
}

/**
 * The cursor after accepting `page`, and whether the walk ends with it: past the last page, or
 * (tailing) on reaching the watermark. The head is the newest rawId of page 1.
 */
export function afterPage(
  cursor: WalkCursor,
  page: number,
  served: TxPage,
  watermark: number | null,
): { cursor: WalkCursor; finished: boolean } {
  const { walk } = cursor;
  const ids = pageRawIds(served);
  const totalPages = Math.max(walk.totalPages, served.totalPages);
  const headRawId = walk.headRawId ?? (page === 1 && ids.length > 0 ? Math.max(...ids) : null);
  const lowest = ids.length > 0 ? Math.min(...ids) : null;
  // Reached when the page shows the watermark's record or an older one, or joins it: a lowest
  // rawId right above the watermark leaves no rawId between them (a page less to fetch when
  // exactly a page's worth of records arrived).
  const reachedWatermark =
    walk.mode === 'tail' && watermark !== null && lowest !== null && lowest <= watermark + 1;
  return {
    cursor: {
      walk: {
        mode: walk.mode,
        nextPage: page + 1,
        headRawId,
        totalPages,
        ...(walk.headAt === undefined ? {} : { headAt: walk.headAt }),
      },
      previousMin: lowest,
    },
    finished: reachedWatermark || page + 1 > totalPages,
  };
}

/**
 * The next page to accept, and the last page worth requesting: the last page listed (at least
 * the next one) and, tailing, the last that can still hold records above the watermark.
 */
export function requestBounds(cursor: WalkCursor, watermark: number | null): { next: number; last: number } {
  const { walk, previousMin } = cursor;
  const tailLast = tailPagesAtMost({ walk, watermark, lowestSeen: previousMin });
  return {
    next: walk.nextPage,
    last: Math.min(Math.max(walk.totalPages, walk.nextPage), tailLast ?? Number.POSITIVE_INFINITY),
  };
}
