import { hostname } from 'node:os';
import type { StreamStatus } from '../db/stream-queries.js';
import { leaseOwnerName } from '../defaults.js';
import type { Logger } from '../logger.js';
import type { SyncStore } from '../sync/ports.js';

/** The lease owner of a one-shot sync: `sync:<host>:<pid>:<random>`, so a later run can tell a dead one. */
export function syncOwner(): string {
  return leaseOwnerName('sync', hostname(), process.pid);
}

/** Whether `owner` is a one-shot sync of this host whose process no longer runs. */
export function isDeadLocalOwner(owner: string, isAlive: (pid: number) => boolean = processAlive): boolean {
  const [role, host, pid] = owner.split(':');
  if (role !== 'sync' || host !== hostname() || !pid || !/^\d+$/.test(pid)) return false;
  return Number(pid) !== process.pid && !isAlive(Number(pid));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Ends the leases still held by one-shot syncs of this host that were killed (SIGKILL, power
 * loss), so the next run resumes at once instead of waiting for the lease to expire. Each lease is
 * released with its own fencing number; a lease taken over meanwhile is left alone.
 */
export async function releaseDeadLeases(input: {
  store: SyncStore;
  streams: readonly StreamStatus[];
  logger: Logger;
}): Promise<number> {
  let released = 0;
  for (const stream of input.streams) {
    const owner = stream.leaseOwner;
    if (owner === null || !isDeadLocalOwner(owner)) continue;
    await input.store.releaseStream(
      { key: stream.key, fence: stream.leaseFence, owner },
      { ok: false, error: `the sync process holding the lease (${owner}) died` },
    );
    input.logger.warn({ stream: stream.key, owner }, 'lease of a dead sync process released');
    released++;
  }
  return released;
}
