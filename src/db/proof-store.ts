import { sql } from 'drizzle-orm';
import type { Logger } from '../logger.js';
import { type BackfillStore, backfillOwner } from '../sync/parallel-backfill.js';
import type { Database } from './connect.js';
import { nameOperations } from './database-errors.js';
import { warnIntegrityMismatches } from './integrity-log.js';
import {
  compactProvenRanges,
  countStoredAbove,
  insertBackfillRun,
  insertProvenRanges,
  renewBackfillLease,
  selectBackfillRun,
  selectProvenRanges,
  selectRunningBackfill,
  selectStreamStarted,
  updateBackfillCheck,
} from './proof.js';
import { writeRejected } from './write-rejected.js';
import { DEFAULT_RECHECK_POLICY, prepareBatch, writeTransactions } from './write-transactions.js';

/**
 * The parallel backfill's store on PostgreSQL/PGlite. A range's pages go through the same
 * encoding and upsert as a stream walk's, several pages in one transaction with the ranges they
 * prove, so a proof never exists without its records.
 */
export function createProofStore(options: {
  database: Database;
  now?: () => Date;
  /** Recover each EVM sender's signature as records are written. Default false. */
  checkSignatures?: boolean;
  logger?: Logger | undefined;
}): BackfillStore {
  const { database } = options;
  const now = options.now ?? (() => new Date());
  const commitRangePages: NonNullable<BackfillStore['commitRangePages']> = async (input) => {
    const at = now();
    const pageOf = new Map<number, number>();
    for (const page of input.pages) for (const tx of page.records) pageOf.set(tx.rawId, page.page);
    const prepared = prepareBatch(
      input.pages.flatMap((page) => page.records),
      {
        now: at,
        burnWindowMs: DEFAULT_RECHECK_POLICY.burnWindowMs,
        pages: input.pages.flatMap((page) => page.records.map(() => page.page)),
        checkSignatures: options.checkSignatures === true,
      },
    );
    return database.db.transaction(async (tx) => {
      // Records and proof commit together, so losing the last commits in a crash only leaves
      // a gap for the check to repair: no need to wait for the disk flush.
      await tx.execute(sql`select set_config('synchronous_commit', 'off', true)`);
      const written = await writeTransactions(tx, {
        records: prepared.records,
        divergent: prepared.divergent,
        origin: { streamKey: input.key, backfillId: input.backfillId },
        now: at,
        queueRechecks: DEFAULT_RECHECK_POLICY,
        // Parsed once per connection, not per commit (connections plan it afresh each time).
        prepared: true,
      });
      warnIntegrityMismatches(
        options.logger,
        { stream: input.key, pages: `${input.pages[0]?.page}-${input.pages.at(-1)?.page}` },
        prepared.records,
      );
      // Each rejected record is reported with the page it was served on.
      const refused = [...prepared.rejected, ...written.clashes];
      const lastPage = input.pages[input.pages.length - 1]?.page ?? null;
      let rejectedCount = 0;
      for (const page of input.pages) {
        const rejected = [
          ...page.rejected,
          ...refused.filter((r) => (r.rawId === undefined ? lastPage : pageOf.get(r.rawId)) === page.page),
        ];
        rejectedCount += rejected.length;
        await writeRejected(tx, { rejected, streamKey: input.key, page: page.page, now: at });
      }
      await renewBackfillLease(tx, { key: input.key, owner: backfillOwner(input.backfillId), now: at });
      await insertProvenRanges(tx, {
        key: input.key,
        backfillId: input.backfillId,
        ranges: input.proven,
        now: at,
      });
      return {
        inserted: written.inserted,
        updated: written.updated,
        unchanged: written.unchanged,
        rejected: rejectedCount,
        conflicts: written.conflicts,
      };
    });
  };
  const store: BackfillStore = {
    startRun: (run) => insertBackfillRun(database.db, { ...run, now: now() }),
    getRun: (id) => selectBackfillRun(database.db, id),
    runningRun: (key) => selectRunningBackfill(database.db, key),
    streamStarted: (key) => selectStreamStarted(database.db, key),
    commitRangePage: ({ page, records, rejected, ...rest }) =>
      commitRangePages({ ...rest, pages: [{ page, records, rejected }] }),
    commitRangePages,
    provenRanges: (key) => selectProvenRanges(database.db, key),
    compactProvenRanges: (key) => database.db.transaction((tx) => compactProvenRanges(tx, key, now())),
    storedAbove: (rawId) => countStoredAbove(database.db, rawId),
    recordCheck: (input) => updateBackfillCheck(database.db, { ...input, now: now() }),
  };
  // The names its failures report (`DatabaseError.operation`).
  return nameOperations(store, {
    startRun: 'backfill-start',
    getRun: 'backfill-select',
    runningRun: 'backfill-select',
    streamStarted: 'backfill-select',
    commitRangePage: 'range-write',
    commitRangePages: 'range-write',
    provenRanges: 'proof-select',
    storedAbove: 'proof-select',
    compactProvenRanges: 'proof-compact',
    recordCheck: 'backfill-check-write',
  });
}
