/** SQL of the parallel backfill's proof: runs, proven ranges, and the rawId questions `verify` asks. */

import { type SQL, sql } from 'drizzle-orm';
import type { BackfillRun } from '../../sync/backfill/parallel-backfill.js';
import type { RawIdRange } from '../../verify/completeness.js';
import { mergeRanges } from '../../verify/completeness.js';
import { type Executor, queryRows, toDate, toNumber } from '../rows.js';
import { textArray } from '../text-array.js';
import { headAssignments } from './stream-heads.js';

/** Every rawId the mirror holds: stored transactions, and records kept aside as rejected. */
const STORED_IDS = sql`select raw_id from ledger_transactions
  union select raw_id from rejected_records where raw_id is not null`;
/** A row of {@link STORED_IDS} with the rawId `x.id` (for `not exists`). */
const STORED_IDS_WHERE_ID = sql`select 1 from ledger_transactions t where t.raw_id = x.id
  union all select 1 from rejected_records r where r.raw_id = x.id`;

interface RunRow {
  id: string;
  stream_key: string;
  head_raw_id: unknown;
  total_pages: unknown;
  status: string;
  round: unknown;
  created_at: unknown;
  open_gap: unknown;
}

const toRun = (row: RunRow): BackfillRun => ({
  id: row.id,
  key: row.stream_key,
  headRawId: Number(row.head_raw_id),
  totalPages: Number(row.total_pages),
  status: row.status as BackfillRun['status'],
  round: Number(row.round),
  headAt: toDate(row.created_at)?.getTime() ?? 0,
  openGap: row.open_gap === null || row.open_gap === undefined ? null : Number(row.open_gap),
});

/** Inserts a running run; `null` when the stream already has one (the partial unique index). */
export async function insertBackfillRun(
  db: Executor,
  run: { id: string; key: string; headRawId: number; totalPages: number; now: Date },
): Promise<BackfillRun | null> {
  // The head it starts from was just read on page 1: the stream's head as last seen.
  const rows = await queryRows<RunRow>(
    db,
    sql`with run as (
          insert into backfill_runs (id, stream_key, head_raw_id, total_pages, status, round, created_at)
          values (${run.id}, ${run.key}, ${run.headRawId}, ${run.totalPages}, 'running', 0, ${run.now.toISOString()})
          on conflict do nothing
          returning id, stream_key, head_raw_id, total_pages, status, round, created_at, open_gap
        ),
        head as (
          update sync_streams set ${headAssignments(run.headRawId, run.now)}
          where key = ${run.key} and exists (select 1 from run)
        )
        select * from run`,
  );
  return rows[0] ? toRun(rows[0]) : null;
}

export async function selectBackfillRun(db: Executor, id: string): Promise<BackfillRun | null> {
  const rows = await queryRows<RunRow>(
    db,
    sql`select id, stream_key, head_raw_id, total_pages, status, round, created_at, open_gap from backfill_runs where id = ${id}`,
  );
  return rows[0] ? toRun(rows[0]) : null;
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

/** The stream's running run, if any. */
export async function selectRunningBackfill(db: Executor, key: string): Promise<BackfillRun | null> {
  const rows = await queryRows<RunRow>(
    db,
    sql`select id, stream_key, head_raw_id, total_pages, status, round, created_at, open_gap from backfill_runs
        where stream_key = ${key} and status = 'running'`,
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

interface RangeRow {
  lo: unknown;
  hi: unknown;
  lo_page: unknown;
}

const toRange = (row: RangeRow): RawIdRange => ({
  lo: Number(row.lo),
  hi: Number(row.hi),
  loPage: toNumber(row.lo_page) ?? undefined,
});

/** The stream's proven ranges, merged. */
export async function selectProvenRanges(db: Executor, key: string): Promise<RawIdRange[]> {
  const rows = await queryRows<RangeRow>(
    db,
    sql`select lo, hi, lo_page from backfill_proven_ranges where stream_key = ${key} order by lo`,
  );
  return mergeRanges(rows.map(toRange));
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
): Promise<{ key: string; spec: Record<string, string>; watermark: number | null }[]> {
  const rows = await queryRows<{ key: string; spec: unknown; watermark: unknown }>(
    db,
    sql`select key, spec, watermark from sync_streams order by key`,
  );
  return rows.map((r) => ({
    key: r.key,
    spec: (typeof r.spec === 'string' ? JSON.parse(r.spec) : r.spec) as Record<string, string>,
    watermark: toNumber(r.watermark),
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
