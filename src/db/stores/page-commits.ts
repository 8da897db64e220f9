/** Page commits on PostgreSQL/PGlite: a stream walk's pages, written with its checkpoint. */
import { sql } from 'drizzle-orm';
import { lastPageOf } from '../../domain/commit-pages.js';
import { CommitLostError, type LeaseLostError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { PageCommit, SyncStore, WriteCounts } from '../../sync/ports/sync-store.js';
import type { Database } from '../connect.js';
import type { Db } from '../drizzle-db.js';
import { queryRows } from '../rows.js';
import { warnIntegrityMismatches } from '../write/integrity-log.js';
import { buildPageWrite } from '../write/page-write-sql.js';
import { prepareBatch } from '../write/prepare-batch.js';
import { toRejectedRows } from '../write/rejected-rows.js';
import type { RereadPolicy } from '../write/reread-queue.js';
import { withRetries } from '../write/write-retries.js';
import { writeTransactions } from '../write/write-transactions.js';
import { leaseLost } from './lease-store.js';

/** Options of {@link createPageCommits}. */
export interface PageCommitOptions {
  database: Database;
  now: () => Date;
  policy: RereadPolicy;
  synchronousCommit: 'on' | 'off';
  checkSignatures: boolean;
  logger?: Logger | undefined;
}

/** The page-commit part of the sync store (see `createPgStore`). */
export function createPageCommits(options: PageCommitOptions): Pick<SyncStore, 'commitPage'> {
  const { database, now, policy, synchronousCommit, checkSignatures, logger } = options;
  return {
    async commitPage(commit: PageCommit): Promise<WriteCounts> {
      const at = now();
      const { lease, pages } = commit;
      const page = lastPageOf(commit);
      // Every sighting, repeats included, with its page: a repeat that disagrees is a conflict.
      const prepared = prepareBatch(
        pages.flatMap((p) => p.records),
        {
          now: at,
          burnWindowMs: policy.burnWindowMs,
          pages: pages.flatMap((p) => p.records.map(() => p.page)),
          checkSignatures,
        },
      );
      const early = [...commit.rejected, ...prepared.rejected];
      // One statement is the whole commit (fence, checkpoint, rows, conflicts, history, rejected
      // records, run counts): atomic on its own, and one round trip per page.
      const written = await withRetries(
        'page-write',
        () =>
          writeTransactions(database.db, {
            records: prepared.records,
            prepared: true,
            statement: buildPageWrite({
              records: prepared.records,
              divergent: prepared.divergent,
              now: at,
              policy,
              page: {
                streamKey: lease.key,
                fence: lease.fence,
                owner: lease.owner,
                page,
                walk: commit.walk,
                watermark: commit.watermark,
                settle: commit.settle,
                head: pageOneHead(pages),
                rejected: toRejectedRows(early),
                synchronousCommit: commit.durable === true ? 'on' : synchronousCommit,
                fromPage: commit.fromPage,
                fromCursor: commit.fromCursor,
                pages: pages.length,
              },
            }),
          }),
        logger,
      );
      if (!written.fenced) throw await refusedCommit(database.db, commit);
      warnIntegrityMismatches(logger, { stream: lease.key, page }, prepared.records);
      if (written.conflicts > 0) {
        logger?.warn(
          { stream: lease.key, page, conflicts: written.conflicts },
          'records served with immutable fields different from the stored ones: stored kept, conflicts recorded',
        );
      }
      return {
        inserted: written.inserted,
        updated: written.updated,
        unchanged: written.unchanged,
        rejected: early.length + written.clashes.length,
        conflicts: written.conflicts,
      };
    },
  };
}

/** The newest rawId of page 1 when the commit holds it: the service's head for the stream. */
function pageOneHead(
  pages: ReadonlyArray<{ page: number; records: readonly { rawId: number }[] }>,
): number | null {
  const first = pages.find((p) => p.page === 1);
  if (first === undefined || first.records.length === 0) return null;
  return first.records.reduce((max, r) => Math.max(max, r.rawId), Number.NEGATIVE_INFINITY);
}

/**
 * Why a page commit wrote nothing: a stale fence (another runner took the lease), else a
 * checkpoint that does not lead to the commit's first page, which only a lost earlier commit of
 * the same lease explains.
 */
async function refusedCommit(db: Db, commit: PageCommit): Promise<LeaseLostError | CommitLostError> {
  const { lease } = commit;
  const [row] = await queryRows<{ fence: string; next_page: number | null; cursor: string | null }>(
    db,
    sql`SELECT lease_fence::text AS fence, (walk->>'nextPage')::int AS next_page, walk->>'cursor' AS cursor
        FROM sync_streams WHERE key = ${lease.key}`,
  );
  const checked = commit.fromPage !== undefined || commit.fromCursor !== undefined;
  if (row === undefined || Number(row.fence) > lease.fence || !checked) return leaseLost(db, lease);
  const detail =
    commit.fromCursor !== undefined
      ? `its checkpoint is at rawId ${row.cursor ?? 'none'}, where this commit follows on from ${commit.fromCursor ?? 'none'}`
      : `its checkpoint leads to page ${row.next_page ?? 1}, where this commit follows on from page ${commit.fromPage}`;
  return new CommitLostError(lease.key, detail, 'page-write');
}
