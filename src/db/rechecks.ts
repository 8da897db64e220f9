/** The re-read queue of records not final yet: its policy and its rescheduling after a re-read. */
import { sql } from 'drizzle-orm';
import type { PendingReason } from './encode.js';
import type { Executor } from './rows.js';

/** When and how often records that are not final are re-read. */
export interface RecheckPolicy {
  /** Delay before the first re-read; doubles with each attempt. Default 30 s. */
  baseMs: number;
  /** Longest delay between re-reads. Default 1 h. */
  maxMs: number;
  /** How long a burn is waited on for its target-chain hash, after first sight and after its ledger time. Default 24 h. */
  burnWindowMs: number;
  /** Re-reads after which a record is no longer re-read (it stays stored as it is). Default 20. */
  maxAttempts: number;
}

export const DEFAULT_RECHECK_POLICY: RecheckPolicy = {
  baseMs: 30_000,
  maxMs: 60 * 60 * 1000,
  burnWindowMs: 24 * 60 * 60 * 1000,
  maxAttempts: 20,
};

/**
 * After a re-read: re-schedules the re-read records still not final (and the `missing` ones)
 * with exponential backoff, and drops from the queue those final, given up on (burns past their
 * window, or `maxAttempts` reached).
 */
export async function rescheduleRechecks(
  executor: Executor,
  input: {
    reread: ReadonlyArray<{ rawId: number; pending: PendingReason | 'missing' }>;
    now: Date;
    policy: RecheckPolicy;
  },
): Promise<void> {
  if (input.reread.length === 0) return;
  const rows = JSON.stringify(input.reread.map((r) => ({ raw_id: r.rawId, pending: r.pending })));
  const now = input.now.toISOString();
  const { baseMs, maxMs, burnWindowMs, maxAttempts } = input.policy;
  await executor.execute(sql`
    WITH reread AS (
      SELECT * FROM json_to_recordset(${rows}::json) AS r(raw_id bigint, pending text)
    ),
    gone AS (
      DELETE FROM ledger_tx_rechecks r
      USING reread x JOIN ledger_transactions t ON t.raw_id = x.raw_id
      WHERE r.raw_id = x.raw_id
        AND (x.pending IS NULL
             OR (x.pending = 'burn' AND t.first_seen_at < ${now}::timestamptz - ${burnWindowMs}::float8 * interval '1 millisecond')
             OR r.attempts + 1 >= ${maxAttempts}::int)
      RETURNING r.raw_id
    )
    UPDATE ledger_tx_rechecks r
    SET attempts = r.attempts + 1,
        due_at = ${now}::timestamptz
          + least(${baseMs}::float8 * power(2::float8, least(r.attempts + 1, 60)), ${maxMs}::float8)
          * interval '1 millisecond'
    FROM reread x
    WHERE r.raw_id = x.raw_id AND r.raw_id NOT IN (SELECT raw_id FROM gone)
  `);
}
