/**
 * The page write: a stream walk's page (or batch of pages) committed on its own, in one
 * statement: the stream's fence is checked (and its checkpoint written) first, nothing else is
 * written when it fails, the records are written, rejected records stored, re-reads queued and
 * the stream's run credited. Run it outside a transaction: it is one. SQL without I/O.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { SettleState } from '../../sync/ports/sync-store.js';
import {
  type RecordWriteInput,
  recordWriteCtes,
  rejectedWithClashes,
  rereadQueueCtes,
  writeResult,
} from './record-write-sql.js';
import { type RejectedRow, upsertRejectedSql } from './rejected-rows.js';
import type { RereadPolicy } from './reread-queue.js';
import { settleAssignments } from './settle-columns.js';
import { headAssignments } from './stream-heads.js';

/** The stream side of a page commit. */
export interface PageWrite {
  streamKey: string;
  fence: number;
  owner: string;
  page: number;
  /** The new walk checkpoint (JSON-able), null when the walk is finished. */
  walk: unknown;
  watermark: number | null;
  /** The stream's settling state after the walk (`PageCommit.settle`); absent: unchanged. */
  settle?: SettleState | undefined;
  /** The newest rawId of page 1 when the commit holds page 1 (the service's head), else null. */
  head: number | null;
  /** Records set aside before the write (already grouped). */
  rejected: readonly RejectedRow[];
  /** PostgreSQL `synchronous_commit` for this commit. */
  synchronousCommit: 'on' | 'off';
  /**
   * The commit's first page: the stored checkpoint must lead there (`PageCommit.fromPage`), else
   * nothing is written and `fenced` is 0, as for a stale fence. Absent: not checked.
   */
  fromPage?: number | undefined;
  /** A walk by key: the cursor the stored checkpoint must hold (`PageCommit.fromCursor`). */
  fromCursor?: number | null | undefined;
  /** Pages the commit holds, for the run's count. Default 1. */
  pages?: number | undefined;
}

/** Input of {@link buildPageWrite}. */
export interface PageWriteInput extends Pick<RecordWriteInput, 'records' | 'divergent'> {
  now: Date;
  /** Queues the records not final for re-reading with this policy. */
  policy: RereadPolicy;
  page: PageWrite;
}

/** The page write's statement; its result row is {@link writeResult}'s. */
export function buildPageWrite(input: PageWriteInput): SQL {
  const now = input.now.toISOString();
  const { page } = input;
  const runId = sql`(SELECT id FROM sync_runs WHERE stream_key = ${page.streamKey} AND fence = ${page.fence}::bigint)`;
  const records = recordWriteCtes({
    records: input.records,
    divergent: input.divergent,
    streamKey: page.streamKey,
    runId,
    backfillId: null,
    now,
    fenced: true,
  });
  return sql`
    WITH ${fencedCte(page, now)}${records}${rereadQueueCtes(input.policy, now)}${pageCtes(page, input.records.length, now)}
    ${writeResult({ fenced: true, synchronousCommit: page.synchronousCommit })}
  `;
}

/**
 * Checks the fence and writes the checkpoint; runs before anything else (the input is gated on
 * it), so it also takes the stream row's lock first and a stale writer waits there. Records the
 * head page 1 showed, and when a walk ends a backfill (the first, without a watermark yet, or a
 * `--full` one) the time, which tells `/ready` which `verify` runs still judge the stream.
 */
function fencedCte(page: PageWrite, now: string): SQL {
  const walkJson = page.walk === null ? null : JSON.stringify(page.walk);
  return sql`fenced AS (
      UPDATE sync_streams SET
        walk = ${walkJson}::jsonb,
        watermark = ${page.watermark}::bigint,
        ${headAssignments(page.head, new Date(now))},${settleAssignments(page.settle)}
        backfilled_at = CASE
          WHEN ${walkJson}::jsonb IS NULL AND ${page.watermark}::bigint IS NOT NULL
               AND (watermark IS NULL OR walk->>'mode' = 'backfill')
          THEN ${now}::timestamptz ELSE backfilled_at END,
        lease_expires_at = CASE
          WHEN lease_owner = ${page.owner} AND lease_fence = ${page.fence}::bigint AND lease_ms IS NOT NULL
          THEN greatest(lease_expires_at, ${now}::timestamptz + lease_ms * interval '1 millisecond')
          ELSE lease_expires_at END,
        updated_at = ${now}::timestamptz
      WHERE key = ${page.streamKey} AND lease_fence <= ${page.fence}::bigint
        ${page.fromPage === undefined ? sql`` : sql`AND coalesce((walk->>'nextPage')::int, 1) = ${page.fromPage}::int`}
        ${page.fromCursor === undefined ? sql`` : sql`AND (walk->>'cursor')::bigint IS NOT DISTINCT FROM ${page.fromCursor}::bigint`}
      RETURNING key
    ),
    `;
}

/** Stores the page's rejected records (those set aside before and those refused for a taken hash) and credits the run. */
function pageCtes(page: PageWrite, records: number, now: string): SQL {
  const early = page.rejected.reduce((n, r) => n + r.seenCount, 0);
  const source = rejectedWithClashes(page.rejected, sql`WHERE EXISTS (SELECT 1 FROM fenced)`);
  const pages = page.pages ?? 1;
  const inserted = sql`(SELECT count(*)::int FROM fresh)`;
  const updated = sql`(SELECT count(*)::int FROM changed)`;
  const unchanged = sql`${records}::int - (SELECT count(*)::int FROM clash) - (SELECT count(*)::int FROM upserted)
          - (SELECT count(*)::int FROM conflict WHERE NOT divergent)`;
  const rejected = sql`${early}::int + (SELECT count(*)::int FROM clash)`;
  const conflicts = sql`(SELECT count(*)::int FROM conflict)`;
  const credit = sql`UPDATE sync_runs SET
        pages = pages + ${pages}::int,
        inserted = inserted + ${inserted},
        updated = updated + ${updated},
        unchanged = unchanged + ${unchanged},
        rejected = rejected + ${rejected},
        conflicts = conflicts + ${conflicts}
      WHERE stream_key = ${page.streamKey} AND fence = ${page.fence}::bigint AND EXISTS (SELECT 1 FROM fenced)`;
  return sql`,
    rejected_written AS (${upsertRejectedSql({ source, streamKey: page.streamKey, page: page.page, now })}),
    run AS (${credit})${endedBackfillCte(page, now)}`;
}

/**
 * When a walk ends with a watermark, the parallel backfill a killed run left open below it is
 * done: every record up to the watermark is stored. A walk of the other dialect, or a `--full`
 * one, may have read the stream around it; left running, it would hold `/ready` and the deferred
 * indexes back for good. A live backfill holds the stream's lease, so no walk ends beside it.
 */
function endedBackfillCte(page: PageWrite, now: string): SQL {
  if (page.walk !== null || page.watermark === null) return sql``;
  return sql`,
    ended_backfill AS (
      UPDATE backfill_runs SET status = 'done', finished_at = ${now}::timestamptz
      WHERE stream_key = ${page.streamKey} AND status = 'running'
        AND head_raw_id <= ${page.watermark}::bigint AND EXISTS (SELECT 1 FROM fenced)
    )`;
}
