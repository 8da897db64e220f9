import type { Logger } from '../../logger.js';
import type { SyncStore } from '../../sync/ports/sync-store.js';
import type { Database } from '../connect.js';
import { nameOperations } from '../database-errors.js';
import { DEFAULT_REREAD_POLICY, type RereadPolicy } from '../write/reread-queue.js';
import { createLeaseStore } from './lease-store.js';
import { createPageCommits } from './page-commits.js';
import { createRereadStore } from './reread-store.js';
import { createStoredGaps } from './stored-gaps.js';

/** Options of {@link createPgStore}. */
export interface PgStoreOptions {
  database: Database;
  /** The clock for leases, `first_seen_at`/`updated_at` and re-read scheduling. Default `new Date()`. */
  now?: () => Date;
  /** Re-read schedule of records not final; each field defaults as in {@link DEFAULT_REREAD_POLICY}. */
  reread?: Partial<RereadPolicy> | undefined;
  /** @deprecated The former name of {@link reread}; `reread` wins where both are given. */
  recheck?: Partial<RereadPolicy> | undefined;
  /**
   * Wait for each commit to reach the disk (PostgreSQL `synchronous_commit`). Default false: a
   * crash may then lose the last fraction of a second of commits, rows and checkpoint together,
   * so the next run fetches those pages again; nothing half-written survives and no record is
   * skipped. The price of true is a disk flush per page.
   */
  synchronousCommit?: boolean;
  /** Recover each EVM sender's signature as records are written (`LEDGER_CHECK_SIGNATURES`). Default false. */
  checkSignatures?: boolean;
  logger?: Logger;
}

/**
 * The sync engine's store on PostgreSQL or PGlite.
 *
 * Leases: `acquireStream` takes a free or expired lease with a new, larger fencing number; the
 * same owner re-acquiring its live lease renews it and keeps the number. Owners must therefore be
 * unique per runner. Every committed page extends the lease by the length asked for at
 * acquisition; a commit or release carrying a fence smaller than the stream's is refused with
 * {@link LeaseLostError} and changes nothing.
 */
export function createPgStore(options: PgStoreOptions): SyncStore {
  const { database } = options;
  const now = options.now ?? (() => new Date());
  const policy: RereadPolicy = { ...DEFAULT_REREAD_POLICY, ...options.recheck, ...options.reread };
  const logger = options.logger;
  const synchronousCommit: 'on' | 'off' = options.synchronousCommit === true ? 'on' : 'off';
  const checkSignatures = options.checkSignatures === true;

  const store: SyncStore = {
    ...createLeaseStore({ database, now }),
    ...createPageCommits({ database, now, policy, synchronousCommit, checkSignatures, logger }),
    ...createRereadStore({ database, policy, synchronousCommit, checkSignatures, logger }),
    ...createStoredGaps(database),
  };
  // The names its failures report (`DatabaseError.operation`, the `operation` of logs).
  return nameOperations(store, {
    acquireStream: 'lease-acquire',
    commitPage: 'page-write',
    releaseStream: 'lease-release',
    advanceWatermark: 'watermark-write',
    duePending: 'reread-select',
    claimDue: 'reread-claim',
    commitReread: 'reread-write',
    storedGaps: 'gap-select',
  });
}
