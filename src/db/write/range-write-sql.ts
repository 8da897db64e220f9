/**
 * The range write: a parallel backfill's pages committed on their own, in one statement: the
 * records, their rejected ones, the ranges they prove and the lease's extension, committed
 * asynchronously (a commit lost in a crash only leaves a gap for the check to repair). Run it
 * outside a transaction: it is one. SQL without I/O.
 */
import { type SQL, sql } from 'drizzle-orm';
import { textArray } from '../text-array.js';
import {
  type RecordWriteInput,
  recordWriteCtes,
  rejectedWithClashes,
  rereadQueueCtes,
  writeResult,
} from './record-write-sql.js';
import { type RejectedRow, upsertRejectedSql } from './rejected-rows.js';
import type { RereadPolicy } from './reread-queue.js';

/** The backfill side of a range commit. */
export interface RangeWrite {
  streamKey: string;
  backfillId: string;
  /** The backfill's owner of the stream lease (`backfillOwner`). */
  owner: string;
  /** Records set aside before the write, grouped, each with its page (`toPagedRejectedRows`). */
  rejected: readonly RejectedRow[];
  /** The ranges of rawIds the pages prove. */
  proven: ReadonlyArray<{ lo: number; hi: number; loPage?: number | undefined }>;
  /** The lowest rawId missing from the pages that may still fill in: lowers the run's `open_gap`. */
  openGap?: number | null | undefined;
}

/** Input of {@link buildRangeWrite}. */
export interface RangeWriteInput extends Pick<RecordWriteInput, 'records' | 'divergent' | 'assumeNew'> {
  now: Date;
  /** Queues the records not final for re-reading with this policy. */
  policy: RereadPolicy;
  range: RangeWrite;
}

/** The range write's statement; its result row is {@link writeResult}'s. */
export function buildRangeWrite(input: RangeWriteInput): SQL {
  const now = input.now.toISOString();
  const { range } = input;
  const records = recordWriteCtes({
    records: input.records,
    divergent: input.divergent,
    streamKey: range.streamKey,
    runId: sql`NULL::bigint`,
    backfillId: range.backfillId,
    now,
    fenced: false,
    assumeNew: input.assumeNew,
  });
  return sql`
    WITH ${records}${rereadQueueCtes(input.policy, now, input.assumeNew === true)}${rangeCtes(range, now)}
    ${writeResult({ fenced: false, synchronousCommit: 'off' })}
  `;
}

/** Input of {@link buildCopiedRangeRest}. */
export interface CopiedRangeRestInput {
  now: Date;
  policy: RereadPolicy;
  range: RangeWrite;
  /** The records copied in that are not final, with why (`ServedRecord.pending`). */
  pending: ReadonlyArray<{ rawId: number; pending: string }>;
}

/**
 * The rest of a range write whose records were copied in new (`range-copy.ts`), in the same
 * transaction: the status history of those not final (read back from the rows: PostgreSQL does
 * it for less than the indexer would spend copying it; a record final when first stored has no
 * history row, see `record-write-sql.ts`), the re-read queue of those not final, the rejected
 * records, the proof and the lease, the pieces of {@link buildRangeWrite} over records all
 * inserted, none in conflict.
 */
export function buildCopiedRangeRest(input: CopiedRangeRestInput): SQL {
  const now = input.now.toISOString();
  const ids = textArray(input.pending.map((p) => String(p.rawId)));
  const reasons = textArray(input.pending.map((p) => p.pending));
  return sql`
    WITH history AS (
      INSERT INTO ledger_tx_status_history (raw_id, status, internal_status, internal_status_code, observed_at)
      SELECT t.raw_id, t.status, t.internal_status, t.internal_status_code, ${now}::timestamptz
      FROM ledger_transactions t WHERE t.raw_id = ANY (${ids}::bigint[])
      ORDER BY t.raw_id
    ),
    input AS (
      SELECT p.raw_id, p.pending FROM unnest(${ids}::bigint[], ${reasons}::text[]) AS p(raw_id, pending)
    ),
    upserted AS (SELECT raw_id FROM input),
    conflict AS (SELECT raw_id, false AS divergent FROM input WHERE false),
    clash AS (SELECT raw_id, NULL::text AS ledger_hash, NULL::text AS reason FROM input WHERE false),
    served AS (SELECT raw_id, NULL::integer AS page FROM input WHERE false)
    ${rereadQueueCtes(input.policy, now, true)}${rangeCtes(input.range, now)}
    SELECT 1 AS done`;
}

/**
 * Stores a parallel backfill range's rejected records (with their pages), extends the backfill's
 * lease on the stream once a third of it has passed, and records the ranges the pages prove: with
 * the records, in the one statement, so a proof never exists without them.
 */
function rangeCtes(range: RangeWrite, now: string): SQL {
  const proven = [
    range.proven.map((r) => String(r.lo)),
    range.proven.map((r) => String(r.hi)),
    range.proven.map((r) => (r.loPage === undefined ? null : String(r.loPage))),
  ].map((values) => textArray(values));
  const source = rejectedWithClashes(range.rejected, sql``);
  return sql`,
    rejected_written AS (${upsertRejectedSql({ source, streamKey: range.streamKey, page: sql`s.page`, now })}),
    lease_renewed AS (${backfillLeaseRenewal({ key: range.streamKey, owner: range.owner, at: now })}),
    proven_written AS (
      INSERT INTO backfill_proven_ranges (stream_key, lo, hi, lo_page, backfill_id, proven_at)
      SELECT ${range.streamKey}, p.lo, p.hi, p.lo_page, ${range.backfillId}, ${now}::timestamptz
      FROM unnest(${proven[0]}::bigint[], ${proven[1]}::bigint[], ${proven[2]}::integer[]) AS p(lo, hi, lo_page)
    )${
      range.openGap === null || range.openGap === undefined
        ? sql``
        : sql`,
    gap_kept AS (
      UPDATE backfill_runs SET open_gap = least(open_gap, ${range.openGap}::bigint) WHERE id = ${range.backfillId}
    )`
    }`;
}

/**
 * The update that extends the stream lease a parallel backfill holds while its ranges make
 * progress, once a third of it has passed (`at`: the commit's time, ISO). Extended by every range
 * commit, the stream's one row would stay locked by each commit until it ends, and the other
 * workers' commits would queue behind it.
 */
export function backfillLeaseRenewal(input: { key: string; owner: string; at: string }): SQL {
  const { at } = input;
  return sql`
    UPDATE sync_streams SET
      lease_expires_at = greatest(lease_expires_at, ${at}::timestamptz + lease_ms * interval '1 millisecond')
    WHERE key = ${input.key} AND lease_owner = ${input.owner} AND lease_ms IS NOT NULL
      AND lease_expires_at < ${at}::timestamptz + lease_ms * interval '1 millisecond' * 2 / 3`;
}
