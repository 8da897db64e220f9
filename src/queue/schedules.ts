import { RECONCILE_LIMIT } from '../defaults.js';
import type { StreamSpec } from '../sync/ports.js';
import { streamKey } from '../sync/stream-key.js';
import type { LedgerQueues } from './queues.js';

/** What `schedule` registers. */
export interface ScheduleOptions {
  /** Period of each stream's sync, in milliseconds. */
  everyMs: number;
  /** The streams to keep in sync; the global list when empty. */
  streams: StreamSpec[];
  /** Period of the re-read of non-final records. Default: `everyMs`. */
  reconcileEveryMs?: number | undefined;
  /** Period of the token and fee refresh. Default: 10 minutes. */
  referenceEveryMs?: number | undefined;
}

/**
 * Registers the periodic jobs with BullMQ job schedulers, one per stream plus the re-read and the
 * reference refresh. Scheduler ids derive from the stream key, so running this again (at every
 * worker start, or by hand) updates the same schedulers instead of adding new ones. Returns the
 * scheduler ids.
 */
export async function registerSchedules(queues: LedgerQueues, options: ScheduleOptions): Promise<string[]> {
  const streams = options.streams.length === 0 ? [{}] : options.streams;
  const ids: string[] = [];
  for (const stream of streams) {
    const id = `sync:${streamKey(stream)}`;
    await queues.sync.upsertJobScheduler(
      id,
      { every: options.everyMs },
      { name: 'sync-stream', data: { stream } },
    );
    ids.push(id);
  }
  await queues.sync.upsertJobScheduler(
    'reconcile',
    { every: options.reconcileEveryMs ?? options.everyMs },
    { name: 'reconcile', data: { limit: RECONCILE_LIMIT } },
  );
  await queues.sync.upsertJobScheduler(
    'refresh-reference',
    { every: options.referenceEveryMs ?? 10 * 60_000 },
    { name: 'refresh-reference', data: {} },
  );
  ids.push('reconcile', 'refresh-reference');
  return ids;
}

/** Ids of the registered schedulers with their periods, for `status` and tests. */
export async function listSchedules(queues: LedgerQueues): Promise<{ id: string; everyMs: number | null }[]> {
  const schedulers = await queues.sync.getJobSchedulers(0, -1, true);
  return schedulers.map((s) => ({ id: s.key, everyMs: s.every ? Number(s.every) : null }));
}
