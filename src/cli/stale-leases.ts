import { hostname } from 'node:os';
import type { Database } from '../db/connect.js';
import { processEnds } from '../db/process-liveness.js';
import { listStreams } from '../db/queries/stream-queries.js';
import { releaseRereadClaims, rereadClaimOwners } from '../db/stores/reread-store.js';
import { isRunnerGone } from '../db/stores/runner-lock.js';
import { parseLeaseOwner } from '../domain/lease-owner.js';
import type { Logger } from '../logger.js';
import type { SyncStore } from '../sync/ports/sync-store.js';

/**
 * How long a lease holder that still looks alive gets to turn out gone, ms: a process being
 * killed keeps its pid and its database connection for a moment.
 */
const DEAD_OWNER_GRACE_MS = 2_000;

/** The pid of `owner` when it is a one-shot sync of this host other than this very process. */
export function localSyncPid(owner: string): number | undefined {
  const parsed = parseLeaseOwner(owner);
  if (parsed?.role !== 'sync' || parsed.host !== hostname() || parsed.pid === process.pid) return undefined;
  return parsed.pid;
}

/** Whether the runner named `owner` (a lease owner) is gone. */
export type OwnerGoneCheck = (owner: string) => Promise<boolean>;

/**
 * How a new run tells that a one-shot sync holding a lease is gone. On PostgreSQL: its liveness
 * lock is free (the server let go of it with the session), on any host. On the embedded
 * database, which lives in a folder of this host: its process no longer runs (a zombie counts
 * as ended). Either waits up to `graceMs` for a holder that still looks alive. Other runners
 * (workers, parallel backfills) are never judged gone: their leases expire.
 */
export function createOwnerGoneCheck(database: Database, graceMs = DEAD_OWNER_GRACE_MS): OwnerGoneCheck {
  if (database.kind === 'postgres') {
    return async (owner) => parseLeaseOwner(owner)?.role === 'sync' && isRunnerGone(database, owner, graceMs);
  }
  return async (owner) => {
    const pid = localSyncPid(owner);
    return pid !== undefined && processEnds(pid, graceMs);
  };
}

/**
 * Ends the leases still held by one-shot syncs that are gone (killed, power loss), so the next
 * run resumes at once instead of waiting for the lease to expire. Each lease is released with
 * its own fencing number; a lease taken over meanwhile is left alone. The re-read claims of such
 * a sync end too: their records are due again at once. Call it before this run takes a lease.
 * Resolves to the number of leases released.
 */
export async function releaseDeadLeases(input: {
  database: Database;
  store: SyncStore;
  logger: Logger;
  /** Default: {@link createOwnerGoneCheck} of the database. */
  isGone?: OwnerGoneCheck | undefined;
  /** The time released re-read claims are due at (a due time already past stays). Default: now. */
  now?: Date | undefined;
}): Promise<number> {
  const isGone = input.isGone ?? createOwnerGoneCheck(input.database);
  // Each owner judged once, whether it holds leases, claims or both.
  const verdicts = new Map<string, Promise<boolean>>();
  const gone = (owner: string): Promise<boolean> => {
    const known = verdicts.get(owner);
    if (known !== undefined) return known;
    const verdict = isGone(owner);
    verdicts.set(owner, verdict);
    return verdict;
  };
  let released = 0;
  for (const stream of await listStreams(input.database.db)) {
    const owner = stream.leaseOwner;
    if (owner === null || !(await gone(owner))) continue;
    await input.store.releaseStream(
      { key: stream.key, fence: stream.leaseFence, owner },
      { ok: false, error: `the sync process holding the lease (${owner}) ended without releasing it` },
    );
    input.logger.warn({ stream: stream.key, owner }, 'lease of an ended sync process released');
    released++;
  }
  // Its re-read claims too: their records would otherwise wait out the claim before a re-read.
  for (const owner of await rereadClaimOwners(input.database)) {
    if (!(await gone(owner))) continue;
    const records = await releaseRereadClaims(input.database, owner, input.now ?? new Date());
    input.logger.warn({ owner, records }, 're-read claims of an ended sync process released');
  }
  return released;
}
