import type { SyncStatus } from '../../src/db/queries/sync-status.js';

/** 12:mm UTC on 2026-11-25: the clock of the stream fixtures. */
export const minuteAt = (minute: number): Date => new Date(Date.UTC(2026, 10, 25, 12, minute));

/** A stream as `status` reads it: backfilled at 12:10, complete and up to date at 12:30. */
export function statusStream(
  overrides: Partial<SyncStatus['streams'][number]> = {},
): SyncStatus['streams'][number] {
  return {
    key: 'txs',
    spec: {},
    watermark: 500,
    walk: null,
    leaseOwner: null,
    leaseFence: 3,
    leaseExpiresAt: null,
    lastSuccessAt: minuteAt(30),
    lastErrorAt: null,
    lastError: null,
    errorStreak: 0,
    headRawId: 500,
    headSeenAt: minuteAt(30),
    backfilledAt: minuteAt(10),
    rejected: 0,
    nonFinal: 0,
    conflicts: 0,
    lastRun: null,
    ...overrides,
  };
}
