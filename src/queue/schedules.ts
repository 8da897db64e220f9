import type { Redis } from 'ioredis';
import { REFERENCE_REFRESH_MS, REREAD_LIMIT } from '../defaults.js';
import type { StreamSpec } from '../domain/stream-key.js';
import { isGlobalList, streamKey } from '../domain/stream-key.js';
import type { Logger } from '../logger.js';
import type { LedgerQueues } from './queues.js';

/** What `schedule` registers. */
export interface ScheduleOptions {
  /** Period of each stream's sync, in milliseconds. */
  everyMs: number;
  /** The streams to keep in sync; the global list when empty. */
  streams: StreamSpec[];
  /** Period of the re-read job. Default: `everyMs`, at least 30 s when the global list is kept in sync (its stream job re-reads too). */
  rereadEveryMs?: number | undefined;
  /** Period of the token and fee refresh. Default: 10 minutes. */
  referenceEveryMs?: number | undefined;
}

/** One periodic job: its BullMQ job scheduler id, job name, payload and period. */
export interface WantedSchedule {
  id: string;
  name: string;
  data: unknown;
  everyMs: number;
}

/**
 * The periodic jobs of `options` (pure): one sync per stream plus the re-read and the reference
 * refresh. Ids derive from the stream key, so registering them again updates the same
 * schedulers instead of adding new ones.
 */
export function wantedSchedules(options: ScheduleOptions): WantedSchedule[] {
  const streams = options.streams.length === 0 ? [{}] : options.streams;
  const lists = streams.some(isGlobalList);
  // With the global list kept in sync, its stream job re-reads after every walk, reading the head
  // pages once for both; the re-read job then only sweeps up what is left, less often.
  const rereadEveryMs =
    options.rereadEveryMs ?? (lists ? Math.max(options.everyMs, 30_000) : options.everyMs);
  return [
    ...streams.map((stream) => ({
      id: `sync:${streamKey(stream)}`,
      name: 'sync-stream',
      data: { stream },
      everyMs: options.everyMs,
    })),
    {
      id: 'reconcile',
      name: 'reconcile',
      // Records are due again at the next stream run after they fell due: those still due two
      // periods and a second later were left by the stream jobs, and are the sweep's.
      data: { limit: REREAD_LIMIT, lists, ...(lists ? { overdueMs: 2 * options.everyMs + 1_000 } : {}) },
      everyMs: rereadEveryMs,
    },
    {
      id: 'refresh-reference',
      name: 'refresh-reference',
      data: {},
      everyMs: options.referenceEveryMs ?? REFERENCE_REFRESH_MS,
    },
  ];
}

/** Registers schedules as BullMQ job schedulers (idempotent upserts). Returns their ids. */
export async function applySchedules(
  queues: LedgerQueues,
  schedules: readonly WantedSchedule[],
): Promise<string[]> {
  for (const s of schedules) {
    await queues.sync.upsertJobScheduler(s.id, { every: s.everyMs }, { name: s.name, data: s.data });
  }
  return schedules.map((s) => s.id);
}

/** Registers the periodic jobs of `options` in Redis only (see {@link wantedSchedules}). Returns the ids. */
export async function registerSchedules(queues: LedgerQueues, options: ScheduleOptions): Promise<string[]> {
  return applySchedules(queues, wantedSchedules(options));
}

/** Ids of the registered schedulers with their periods, for `status` and tests. */
export async function listSchedules(queues: LedgerQueues): Promise<{ id: string; everyMs: number | null }[]> {
  const schedulers = await queues.sync.getJobSchedulers(0, -1, true);
  return schedulers.map((s) => ({ id: s.key, everyMs: s.every ? Number(s.every) : null }));
}

/** Options of {@link keepSchedulesRegistered}. */
export interface KeepSchedulesInput {
  /** The connection the queues use: its `ready` event marks every reconnect. */
  connection: Redis;
  queues: LedgerQueues;
  /** Reads the wanted schedules (from PostgreSQL). */
  load: () => Promise<WantedSchedule[]>;
  logger: Logger;
  /** Pause before trying again after a failed registration. Default 5000 ms. */
  retryMs?: number | undefined;
}

/**
 * Registers the wanted schedules now and again every time the Redis connection becomes ready
 * after a reconnect: a Redis restarted without its data has lost every job scheduler, and
 * nothing would run until someone ran `schedule` again. Registration is idempotent, so a Redis
 * that kept its data is not disturbed. A failed registration is tried again after `retryMs`.
 * `started` settles after the first attempt; `stop` ends the watching.
 */
export function keepSchedulesRegistered(input: KeepSchedulesInput): { started: Promise<void>; stop(): void } {
  const { logger } = input;
  let chain = Promise.resolve();
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const register = (reason: 'start' | 'reconnect' | 'retry'): Promise<void> => {
    chain = chain.then(async () => {
      if (stopped) return;
      try {
        const ids = await applySchedules(input.queues, await input.load());
        logger.info({ reason, schedules: ids.length }, 'schedules registered');
      } catch (error) {
        logger.warn({ err: error, reason }, 'could not register the schedules, trying again');
        clearTimeout(retry);
        retry = setTimeout(() => void register('retry'), input.retryMs ?? 5000);
        retry.unref();
      }
    });
    return chain;
  };
  const onReady = (): void => {
    void register('reconnect');
  };
  input.connection.on('ready', onReady);
  return {
    started: register('start'),
    stop() {
      stopped = true;
      clearTimeout(retry);
      input.connection.off('ready', onReady);
    },
  };
}
