/**
 * Which dialect a stream's list is read in, as `status` and the status page name it, from what
 * the database holds (pure: the queries hand it their rows).
 */

import type { StreamLastRun } from '../../db/queries/stream-readings.js';
import { isKeyCheckpoint, type WalkCheckpoint } from '../../domain/checkpoints.js';

/** How a stream's list is read. */
export interface ListReading {
  dialect: 'key' | 'page';
  /** By key, the records asked a request; `null` by page (always ten) or when not recorded. */
  count: number | null;
  /** What says so: the walk in progress, the stream's last runs, or the dialect kept for the service. */
  from: 'walk' | 'run' | 'service';
}

/**
 * The walk in progress decides (only a walk by key has a cursor); an idle stream is read as its
 * last runs recorded, else as the service's lists answered when asked (`service_dialects`). The
 * count of a walk by key is the one its stream's last run by key ended with: the walk keeps none.
 */
export function listReading(input: {
  walk: WalkCheckpoint | null;
  lastRun: Pick<StreamLastRun, 'paging' | 'keyCount'> | null;
  kept: 'key' | 'page' | null;
}): ListReading | null {
  const { walk, lastRun, kept } = input;
  const runCount = lastRun?.paging === 'key' ? lastRun.keyCount : null;
  if (walk) {
    const byKey = isKeyCheckpoint(walk);
    return { dialect: byKey ? 'key' : 'page', count: byKey ? runCount : null, from: 'walk' };
  }
  if (lastRun?.paging) return { dialect: lastRun.paging, count: runCount, from: 'run' };
  if (kept) return { dialect: kept, count: null, from: 'service' };
  return null;
}

/** The reading in a few words: `key, count 100`, `key` (count not recorded), `page`, or `-`. */
export function formatListReading(reading: ListReading | null): string {
  if (reading === null) return '-';
  if (reading.dialect === 'page') return 'page';
  return reading.count === null ? 'key' : `key, count ${reading.count}`;
}

/** The pages the last run committed (by key, one a request answered), with its outcome unless ok. */
export function formatLastRun(run: Pick<StreamLastRun, 'pages' | 'outcome'> | null): string {
  if (run === null) return '-';
  const pages = `${run.pages} ${run.pages === 1 ? 'page' : 'pages'}`;
  return run.outcome === 'ok' ? pages : `${pages}, ${run.outcome}`;
}
