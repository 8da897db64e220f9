/** New records per minute, for the status page's chart. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows, toNumber } from '../rows.js';

/** Records first stored in one minute (UTC, whole minutes since the epoch). */
export interface MinuteCount {
  /** The minute's start, in ms since the epoch. */
  minuteMs: number;
  records: number;
}

/**
 * Records first stored at or after `since` and before `until`, counted per minute. Counted from
 * `ledger_transactions.first_seen_at` rather than `sync_runs`: each record is counted once, in the
 * minute it was stored, whichever walk, backfill range or re-read stored it (a run's totals are
 * per run, not per minute, and parallel backfills write none); `ledger_transactions_first_seen_idx`
 * makes it a scan of that hour's index entries. Minutes without a record are left out.
 */
export async function readRecordsPerMinute(
  executor: Executor,
  range: { since: Date; until: Date },
): Promise<MinuteCount[]> {
  // Minutes from the epoch, not date_trunc: that one would follow the session's time zone.
  const rows = await queryRows<{ minute: unknown; records: unknown }>(
    executor,
    sql`SELECT floor(extract(epoch FROM first_seen_at) / 60)::bigint::text AS minute, count(*)::int AS records
        FROM ledger_transactions
        WHERE first_seen_at >= ${range.since.toISOString()}::timestamptz
          AND first_seen_at < ${range.until.toISOString()}::timestamptz
        GROUP BY 1 ORDER BY 1`,
  );
  return rows.map((row) => ({
    minuteMs: (toNumber(row.minute) ?? 0) * 60_000,
    records: toNumber(row.records) ?? 0,
  }));
}
