/** The re-read queue of records not final yet: its policy and its rescheduling after a re-read. */
import { sql } from 'drizzle-orm';
import { REREAD_DEFAULTS } from '../../defaults.js';
import type { Executor } from '../rows.js';
import type { PendingReason } from './encode.js';

/**
 * When and how often records that are not final are re-read.
 *
 * A record is due again `recheckAfterMs` after each read. Once it is a straggler (first seen more
 * than `stragglerAgeMs` ago) and `fastReads` reads in a row found it as it was, the delay grows
 * with its age instead (a quarter of it, at most `maxMs`): the geometric backoff of a record
 * that waits hours. It leaves the queue when final, or `burnWindowMs` after first sight.
 */
export interface RereadPolicy {
  /** `LEDGER_RECHECK_AFTER_MS`: how long after a read a record not final is due again. Default 2 s. */
  recheckAfterMs: number;
  /** `LEDGER_STRAGGLER_AGE_MS`: age since first sight past which an unchanged record is read with backoff. Default 2 min. */
  stragglerAgeMs: number;
  /** Reads in a row finding a straggler unchanged before its backoff starts. Default 3. */
  fastReads: number;
  /** Longest delay between re-reads. Default 1 h. */
  maxMs: number;
  /**
   * How long after first sight a record is re-read at all (it stays stored as it is), and how
   * long after its ledger time a burn is waited on for its target-chain hash. Default 24 h.
   */
  burnWindowMs: number;
  /** How long a runner's claim on the due records it is re-reading keeps others off them. Default 15 s. */
  claimMs: number;
}

export const DEFAULT_REREAD_POLICY: RereadPolicy = {
  ...REREAD_DEFAULTS,
  fastReads: 3,
  maxMs: 60 * 60 * 1000,
  burnWindowMs: 24 * 60 * 60 * 1000,
  claimMs: 15_000,
};

/** Share of a straggler's age waited before its next re-read. */
export const BACKOFF_SHARE_OF_AGE = 0.25;

/**
 * After a re-read: re-schedules the re-read records still not final (and the `missing` ones,
 * which the service answered 404 for: kept, reported, and read again like the others), and
 * drops from the queue those final or given up on.
 *
 * A record still not packaged at its first re-read, made when it was due, is due again at once,
 * that is in the next run: records are packaged after about the same delay, so one that missed
 * it at its first re-read (read just before it) is about to be, and the next run finds it beside
 * the records of its age that it re-reads anyway, where 2 s later it would sit alone on a page.
 */
export async function rescheduleRereads(
  executor: Executor,
  input: {
    reread: ReadonlyArray<{ rawId: number; pending: PendingReason | 'missing' }>;
    now: Date;
    policy: RereadPolicy;
  },
): Promise<void> {
  if (input.reread.length === 0) return;
  const rows = JSON.stringify(input.reread.map((r) => ({ raw_id: r.rawId, pending: r.pending })));
  const now = input.now.toISOString();
  const { recheckAfterMs, stragglerAgeMs, fastReads, maxMs, burnWindowMs } = input.policy;
  await executor.execute(sql`
    WITH reread AS (
      SELECT DISTINCT ON (raw_id) * FROM json_to_recordset(${rows}::json) AS r(raw_id bigint, pending text)
    ),
    gone AS (
      DELETE FROM ledger_tx_rechecks r
      USING reread x JOIN ledger_transactions t ON t.raw_id = x.raw_id
      WHERE r.raw_id = x.raw_id
        AND (x.pending IS NULL
             OR t.first_seen_at < ${now}::timestamptz - ${burnWindowMs}::float8 * interval '1 millisecond')
      RETURNING r.raw_id
    ),
    next AS (
      SELECT r.raw_id, x.pending,
        CASE WHEN r.pending = x.pending THEN r.unchanged + 1 ELSE 0 END AS unchanged,
        r.attempts = 0 AND r.pending = 'status' AND x.pending = 'status' AS just_missed,
        extract(epoch FROM ${now}::timestamptz - t.first_seen_at) * 1000 AS age_ms
      FROM ledger_tx_rechecks r JOIN reread x ON x.raw_id = r.raw_id JOIN ledger_transactions t ON t.raw_id = r.raw_id
      WHERE r.raw_id NOT IN (SELECT raw_id FROM gone)
    )
    UPDATE ledger_tx_rechecks r
    SET attempts = r.attempts + 1,
        claimed_by = NULL,
        pending = n.pending,
        unchanged = n.unchanged,
        due_at = ${now}::timestamptz + interval '1 millisecond' * round(CASE
          WHEN n.just_missed AND n.age_ms >= ${recheckAfterMs}::float8 THEN 0
          WHEN n.age_ms < ${stragglerAgeMs}::float8 OR n.unchanged < ${fastReads}::int THEN ${recheckAfterMs}::float8
          ELSE least(${maxMs}::float8, greatest(${recheckAfterMs}::float8, n.age_ms * ${BACKOFF_SHARE_OF_AGE}::float8))
        END)
    FROM next n
    WHERE r.raw_id = n.raw_id
  `);
}

/** The delay before the next re-read, as {@link rescheduleRereads} computes it (for stores without SQL). */
export function nextRereadDelay(
  policy: RereadPolicy,
  input: {
    ageMs: number;
    unchanged: number;
    /** Reads before this one, and why the record was pending before it and is now. */
    attempts: number;
    before: string | null;
    after: string | null;
  },
): number {
  const justMissed = input.attempts === 0 && input.before === 'status' && input.after === 'status';
  if (justMissed && input.ageMs >= policy.recheckAfterMs) return 0;
  if (input.ageMs < policy.stragglerAgeMs || input.unchanged < policy.fastReads) return policy.recheckAfterMs;
  return Math.round(
    Math.min(policy.maxMs, Math.max(policy.recheckAfterMs, input.ageMs * BACKOFF_SHARE_OF_AGE)),
  );
}
