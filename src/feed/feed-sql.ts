/**
 * The feed's SQL, built by pure functions and run by `feed-store.ts`. The events are written by
 * the triggers of migration `0022_feed_triggers.sql`; here they are stamped, read and expired.
 */
import { type SQL, sql } from 'drizzle-orm';

/**
 * Advisory lock held (for one transaction) by whoever stamps or expires: stamps are given one
 * step at a time, each after the last, in every process.
 */
export const FEED_STAMP_LOCK_KEY = 7_311_905_021;

/** The channel the triggers notify once per committed transaction that wrote events. */
export const COMMIT_CHANNEL = 'ledger_feed_commit';

/** The channel a stamper notifies once per step that stamped something: readers read then. */
export const STAMPED_CHANNEL = 'ledger_feed_stamped';

export const lockStamps = (): SQL => sql`SELECT pg_advisory_xact_lock(${FEED_STAMP_LOCK_KEY})`;

/**
 * Gives positions to up to `limit` committed transactions not stamped yet: each a range right
 * after the last one given (or the retention's horizon), as wide as its events' ids span, so an
 * event's position is its transaction's first position plus `id - min_event_id`. Runs under
 * {@link lockStamps}: every stamp comes after every earlier one, and a transaction still running
 * is invisible here and is stamped by a later step, above every position given now.
 * `clock_timestamp()` rather than `now()`: the step may have waited for the lock.
 */
export function stampStatement(limit: number): SQL {
  return sql`
    WITH base AS (
      SELECT GREATEST(
        (SELECT max(last_position) FROM ledger_feed_transactions),
        (SELECT retained_after FROM ledger_feed_horizon WHERE id = 1),
        0) AS p
    ), pending AS (
      SELECT t.xid, s.min_id, s.max_id
      FROM ledger_feed_transactions t
      CROSS JOIN LATERAL (
        SELECT min(e.id) AS min_id, max(e.id) AS max_id FROM ledger_feed_events e WHERE e.xid = t.xid
      ) s
      WHERE t.last_position IS NULL
      ORDER BY t.xid
      LIMIT ${limit}
    ), ranged AS (
      SELECT xid, min_id, max_id - min_id AS span,
        (p + sum(max_id - min_id + 1) OVER (ORDER BY xid))::bigint AS last_pos
      FROM pending CROSS JOIN base
      WHERE min_id IS NOT NULL
    ), stamped AS (
      UPDATE ledger_feed_transactions t
      SET first_position = r.last_pos - r.span, last_position = r.last_pos,
        min_event_id = r.min_id, stamped_at = clock_timestamp()
      FROM ranged r
      WHERE t.xid = r.xid
      RETURNING t.last_position
    ), emptied AS (
      -- A marked transaction without events (they commit together; deleted by hand?) gets no empty range.
      DELETE FROM ledger_feed_transactions t USING pending q WHERE t.xid = q.xid AND q.min_id IS NULL
    )
    SELECT count(*)::int AS transactions, max(last_position)::text AS head FROM stamped`;
}

/** Wakes the readers of every process after a step that stamped. */
export const notifyStamped = (head: number): SQL =>
  sql`SELECT pg_notify(${STAMPED_CHANNEL}, ${String(head)})`;

/** The retention's horizon (every position at or below it deleted) and the last position stamped. */
export function boundsStatement(): SQL {
  return sql`
    SELECT (SELECT retained_after FROM ledger_feed_horizon WHERE id = 1)::text AS horizon,
      (SELECT max(last_position) FROM ledger_feed_transactions)::text AS head`;
}

/**
 * Up to `limit` events after position `after`, in position order: the stamped transactions from
 * the one holding `after + 1` on (their index on `last_position`), each with its events (the
 * events' primary key).
 */
export function eventsAfterStatement(after: number, limit: number): SQL {
  return sql`
    SELECT (t.first_position + (e.id - t.min_event_id))::text AS position, e.kind, e.raw_id::text AS raw_id,
      e.action, e.token_tag, e.from_account, e.to_account, e.status, e.internal_status, e.target_chain_tx_hash,
      e.express_chain_tx_hash, e.express_withdraw_fee, e.express_refund_ledger_hash, e.express_err, e.old,
      t.stamped_at,
      -- A bundle's items name accounts of their own: an account filter finds the bundles that move its tokens.
      CASE WHEN e.action = 'bundle' THEN (
        SELECT jsonb_agg(DISTINCT p.account ORDER BY p.account) FROM ledger_bundle_items b
        CROSS JOIN LATERAL (VALUES (b.from_account), (b.to_account)) AS p(account)
        WHERE b.raw_id = e.raw_id) END AS item_accounts
    FROM ledger_feed_transactions t
    JOIN ledger_feed_events e ON e.xid = t.xid
    WHERE t.last_position > ${after}
      -- Written on e.id, so the events' key skips what a resumed transaction already gave.
      AND e.id > ${after} - t.first_position + t.min_event_id
    ORDER BY t.last_position, e.id
    LIMIT ${limit}`;
}

/**
 * Deletes up to `limit` of the oldest stamped transactions, up to the last one stamped before
 * `cutoff`, with their events: a prefix of the positions (stamps are given in time order, one step
 * after the other), and moves the horizon past them. Run under {@link lockStamps}, so a stamp
 * step never continues from a position deleted meanwhile.
 */
export function expireStatement(cutoff: Date, limit: number): SQL {
  return sql`
    WITH doomed AS (
      SELECT xid, last_position FROM ledger_feed_transactions
      WHERE last_position <= (
          SELECT last_position FROM ledger_feed_transactions
          WHERE stamped_at < ${cutoff.toISOString()}::timestamptz
          ORDER BY stamped_at DESC LIMIT 1)
      ORDER BY last_position
      LIMIT ${limit}
    ), events AS (
      DELETE FROM ledger_feed_events e USING doomed d WHERE e.xid = d.xid RETURNING 1
    ), gone AS (
      DELETE FROM ledger_feed_transactions t USING doomed d WHERE t.xid = d.xid RETURNING t.last_position
    ), horizon AS (
      UPDATE ledger_feed_horizon SET retained_after = GREATEST(retained_after, (SELECT max(last_position) FROM gone))
      WHERE id = 1 AND EXISTS (SELECT 1 FROM gone)
      RETURNING retained_after
    )
    SELECT (SELECT count(*) FROM gone)::int AS transactions, (SELECT count(*) FROM events)::int AS events`;
}
