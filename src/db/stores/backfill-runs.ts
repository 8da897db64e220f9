/** The parallel backfill's runs and proven ranges, written: a run started and checked, ranges proven and compacted. */
import { sql } from 'drizzle-orm';
import { mergeRanges, type RawIdRange } from '../../domain/raw-id-ranges.js';
import type { BackfillRun } from '../../sync/ports/backfill-store.js';
import { type RangeRow, RUN_COLUMNS, type RunRow, toRange, toRun } from '../queries/backfill-proofs.js';
import { type Executor, queryRows } from '../rows.js';
import { headAssignments } from '../write/stream-heads.js';

/** Inserts a running run; `null` when the stream already has one (the partial unique index). */
export async function insertBackfillRun(
  db: Executor,
  run: Pick<BackfillRun, 'id' | 'key' | 'headRawId' | 'totalPages' | 'floor' | 'gapFloor'> & { now: Date },
): Promise<BackfillRun | null> {
  // The head it starts from was just read on page 1: the stream's head as last seen.
  const rows = await queryRows<RunRow>(
    db,
    sql`with run as (
          insert into backfill_runs (id, stream_key, head_raw_id, total_pages, floor_raw_id, gap_floor_raw_id,
                                     status, round, created_at)
          values (${run.id}, ${run.key}, ${run.headRawId}, ${run.totalPages}, ${run.floor}::bigint,
                  ${run.gapFloor}::bigint, 'running', 0, ${run.now.toISOString()})
          on conflict do nothing
          returning ${RUN_COLUMNS}
        ),
        head as (
          update sync_streams set ${headAssignments(run.headRawId, run.now)}
          where key = ${run.key} and exists (select 1 from run)
        )
        select * from run`,
  );
  return rows[0] ? toRun(rows[0]) : null;
}

export async function updateBackfillCheck(
  db: Executor,
  input: {
    id: string;
    round: number;
    gaps: RawIdRange[];
    status: BackfillRun['status'];
    error?: string | undefined;
    now: Date;
  },
): Promise<void> {
  const finished = input.status === 'running' ? null : input.now.toISOString();
  await db.execute(
    sql`update backfill_runs
        set round = greatest(round, ${input.round}), gaps = ${JSON.stringify(input.gaps)}::jsonb, status = ${input.status},
            error = ${input.error ?? null}, finished_at = ${finished}
        where id = ${input.id} and status = 'running'`,
  );
}

export async function insertProvenRanges(
  db: Executor,
  input: { key: string; backfillId: string | null; ranges: RawIdRange[]; now: Date },
): Promise<void> {
  const provenAt = input.now.toISOString();
  // Several rows per statement, well within the protocol's limit on parameters.
  for (let at = 0; at < input.ranges.length; at += 1000) {
    const rows = input.ranges
      .slice(at, at + 1000)
      .map(
        (range) =>
          sql`(${input.key}, ${range.lo}, ${range.hi}, ${range.loPage ?? null}, ${input.backfillId}, ${provenAt})`,
      );
    await db.execute(
      sql`insert into backfill_proven_ranges (stream_key, lo, hi, lo_page, backfill_id, proven_at)
          values ${sql.join(rows, sql`, `)}`,
    );
  }
}

/**
 * Replaces the stream's proven ranges by their merged form, so the table stays as small as the
 * number of distinct ranges rather than the number of pages ever fetched. Run it in a
 * transaction: it deletes exactly the rows it read and merged, so ranges another writer commits
 * meanwhile are kept. Returns how many rows the stream has left.
 */
export async function compactProvenRanges(db: Executor, key: string, now: Date): Promise<number> {
  const rows = await queryRows<RangeRow>(
    db,
    sql`delete from backfill_proven_ranges where stream_key = ${key} returning lo, hi, lo_page`,
  );
  const merged = mergeRanges(rows.map(toRange));
  await insertProvenRanges(db, { key, backfillId: null, ranges: merged, now });
  return merged.length;
}
