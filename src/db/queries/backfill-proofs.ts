/** The parallel backfill's proof, read: its runs, its proven ranges, and the rawId questions `verify` asks. */

import { sql } from 'drizzle-orm';
import type { RawIdRange } from '../../domain/raw-id-ranges.js';
import { mergeRanges } from '../../domain/raw-id-ranges.js';
import type { BackfillRun } from '../../sync/ports/backfill-store.js';
import { type Executor, queryRows, toDate, toNumber } from '../rows.js';
import { textArray } from '../text-array.js';

/** Every rawId the mirror holds: stored transactions, and records kept aside as rejected. */
const STORED_IDS = sql`select raw_id from ledger_transactions
  union select raw_id from rejected_records where raw_id is not null`;
/** A row of {@link STORED_IDS} with the rawId `x.id` (for `not exists`). */
const STORED_IDS_WHERE_ID = sql`select 1 from ledger_transactions t where t.raw_id = x.id
  union all select 1 from rejected_records r where r.raw_id = x.id`;

/** A `backfill_runs` row as read. */
export interface RunRow {
  id: string;
  stream_key: string;
  head_raw_id: unknown;
  total_pages: unknown;
  status: string;
  round: unknown;
  created_at: unknown;
  open_gap: unknown;
  floor_raw_id: unknown;
  gap_floor_raw_id: unknown;
}

/** A run as the port sees it. */
export const toRun = (row: RunRow): BackfillRun => ({
  id: row.id,
  key: row.stream_key,
  headRawId: Number(row.head_raw_id),
  totalPages: Number(row.total_pages),
  status: row.status as BackfillRun['status'],
  round: Number(row.round),
  headAt: toDate(row.created_at)?.getTime() ?? 0,
  openGap: toNumber(row.open_gap),
  floor: toNumber(row.floor_raw_id),
  gapFloor: toNumber(row.gap_floor_raw_id),
});

/** The columns of a run as {@link toRun} reads them. */
export const RUN_COLUMNS = sql.raw(
  'id, stream_key, head_raw_id, total_pages, status, round, created_at, open_gap, floor_raw_id, gap_floor_raw_id',
);

export async function selectBackfillRun(db: Executor, id: string): Promise<BackfillRun | null> {
  const rows = await queryRows<RunRow>(db, sql`select ${RUN_COLUMNS} from backfill_runs where id = ${id}`);
  return rows[0] ? toRun(rows[0]) : null;
}

/** The stream's running run, if any. */
export async function selectRunningBackfill(db: Executor, key: string): Promise<BackfillRun | null> {
  const rows = await queryRows<RunRow>(
    db,
    sql`select ${RUN_COLUMNS} from backfill_runs where stream_key = ${key} and status = 'running'`,
  );
  return rows[0] ? toRun(rows[0]) : null;
}

/** A `backfill_proven_ranges` row as read. */
export interface RangeRow {
  lo: unknown;
  hi: unknown;
  lo_page: unknown;
}

/** A proven range as the port sees it. */
export const toRange = (row: RangeRow): RawIdRange => ({
  lo: Number(row.lo),
  hi: Number(row.hi),
  loPage: toNumber(row.lo_page) ?? undefined,
});

/** The stream's proven ranges (or the run `backfillId`'s alone), merged. */
export async function selectProvenRanges(
  db: Executor,
  key: string,
  backfillId?: string,
): Promise<RawIdRange[]> {
  const rows = await queryRows<RangeRow>(
    db,
    sql`select lo, hi, lo_page from backfill_proven_ranges
        where stream_key = ${key} and (${backfillId ?? null}::text is null or backfill_id = ${backfillId ?? null})
        order by lo`,
  );
  return mergeRanges(rows.map(toRange));
}

/** Stored records (valid or rejected) with a rawId above `rawId`, in the global list. */
export async function countStoredAbove(db: Executor, rawId: number): Promise<number> {
  const rows = await queryRows<{ n: unknown }>(
    db,
    sql`select (select count(*) from ledger_transactions where raw_id > ${rawId})
             + (select count(distinct raw_id) from rejected_records r where raw_id > ${rawId}
                and not exists (select 1 from ledger_transactions t where t.raw_id = r.raw_id)) as n`,
  );
  return toNumber(rows[0]?.n) ?? 0;
}

/** Whether any record with a rawId from `lo` to `hi` is stored: one probe of the primary key. */
export async function anyStoredBetween(db: Executor, lo: number, hi: number): Promise<boolean> {
  const rows = await queryRows<{ stored: boolean }>(
    db,
    sql`select exists (select 1 from ledger_transactions where raw_id between ${lo} and ${hi}) as stored`,
  );
  return rows[0]?.stored === true;
}

/** Places where consecutive stored rawIds (up to `upTo`) are more than one apart. */
export async function selectRawIdHoles(db: Executor, upTo: number, limit: number): Promise<RawIdRange[]> {
  const rows = await queryRows<{ lo: unknown; hi: unknown }>(
    db,
    sql`select prev + 1 as lo, raw_id - 1 as hi from (
          select raw_id, lag(raw_id) over (order by raw_id) as prev
          from (${STORED_IDS}) ids where raw_id <= ${upTo}
        ) s where raw_id - prev > 1 order by lo limit ${limit}`,
  );
  return rows.map((r) => ({ lo: Number(r.lo), hi: Number(r.hi) }));
}

/** Every stream with its watermark and spec, for `verify`. */
export async function selectStreams(
  db: Executor,
): Promise<
  { key: string; spec: Record<string, string>; watermark: number | null; settled: number | null }[]
> {
  const rows = await queryRows<{ key: string; spec: unknown; watermark: unknown; settled: unknown }>(
    db,
    sql`select key, spec, watermark, settled_raw_id as settled from sync_streams order by key`,
  );
  return rows.map((r) => ({
    key: r.key,
    spec: (typeof r.spec === 'string' ? JSON.parse(r.spec) : r.spec) as Record<string, string>,
    watermark: toNumber(r.watermark),
    settled: toNumber(r.settled),
  }));
}

/** How many places below `upTo` consecutive stored rawIds are more than one apart. */
export async function countRawIdHoles(db: Executor, upTo: number): Promise<number> {
  const rows = await queryRows<{ n: unknown }>(
    db,
    sql`select count(*) as n from (
          select raw_id - lag(raw_id) over (order by raw_id) as step
          from (${STORED_IDS}) ids where raw_id <= ${upTo}
        ) s where step > 1`,
  );
  return toNumber(rows[0]?.n) ?? 0;
}

/** Whether a stream has a watermark or a walk in progress (no row: never synced). */
export async function selectStreamStarted(db: Executor, key: string): Promise<boolean> {
  const rows = await queryRows<{ started: boolean }>(
    db,
    sql`select (watermark is not null or walk is not null) as started from sync_streams where key = ${key}`,
  );
  return rows[0]?.started === true;
}

/**
 * Which of `rawIds` are neither stored nor kept aside as rejected, ascending: records a list
 * showed that the table lacks.
 */
export async function selectUnstoredRawIds(db: Executor, rawIds: readonly number[]): Promise<number[]> {
  const missing: number[] = [];
  // A few thousand ids a query keeps each parameter small.
  for (let i = 0; i < rawIds.length; i += 5000) {
    const chunk = rawIds.slice(i, i + 5000).map(String);
    const rows = await queryRows<{ raw_id: unknown }>(
      db,
      sql`select x.id as raw_id from unnest(${textArray(chunk)}::bigint[]) as x(id)
          where not exists (${STORED_IDS_WHERE_ID}) order by x.id`,
    );
    for (const row of rows) missing.push(toNumber(row.raw_id) ?? -1);
  }
  return missing.sort((a, b) => a - b);
}
