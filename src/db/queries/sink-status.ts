/** The feed's head and each sink's standing, for `/status` and the status page. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows, toDate } from '../rows.js';

/** One sink as the status shows it. */
export interface SinkStatus {
  name: string;
  kind: string;
  filter: Record<string, string>;
  /** The last position delivered (or passed). */
  position: number;
  /** Positions between it and the feed's head. */
  lagPositions: number;
  /** How long ago the oldest event it has not passed yet was stamped; 0 when it is at the head. */
  lagSeconds: number;
  deliveredEvents: number;
  deliveredAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  /** The runner delivering it now; null when no lease is live. */
  deliveredBy: string | null;
  deadLetters: number;
}

/** The feed's bounds and its sinks. */
export interface FeedStatus {
  /** The last position stamped (0: none yet). */
  head: number;
  /** Every position at or below it was deleted by the retention. */
  horizon: number;
  /** Transactions committed and not stamped yet: they wait for a process that serves the feed, or the end of a `sync`. */
  unstamped: number;
  sinks: SinkStatus[];
}

/** Reads the feed's head and horizon and every sink that ever ran, by name. */
export async function readFeedStatus(db: Executor): Promise<FeedStatus> {
  const [bounds] = await queryRows<{ head: string | null; horizon: string | null; unstamped: number }>(
    db,
    sql`SELECT (SELECT max(last_position) FROM ledger_feed_transactions)::text AS head,
          (SELECT retained_after FROM ledger_feed_horizon WHERE id = 1)::text AS horizon,
          (SELECT count(*) FROM ledger_feed_transactions WHERE last_position IS NULL)::int AS unstamped`,
  );
  const horizon = Number(bounds?.horizon ?? 0);
  const head = Math.max(Number(bounds?.head ?? 0), horizon);
  const rows = await queryRows<{
    name: string;
    kind: string;
    filter: string;
    position: string;
    delivered_events: string;
    delivered_at: unknown;
    last_error: string | null;
    last_error_at: unknown;
    delivered_by: string | null;
    dead_letters: number;
    lag_seconds: number | null;
  }>(
    db,
    sql`SELECT s.name, s.kind, s.filter::text AS filter, s.position::text AS position,
          s.delivered_events::text AS delivered_events, s.delivered_at, s.last_error, s.last_error_at,
          CASE WHEN s.lease_expires_at > clock_timestamp() THEN s.lease_owner END AS delivered_by,
          (SELECT count(*) FROM feed_sink_dead_letters d WHERE d.sink = s.name)::int AS dead_letters,
          (SELECT extract(epoch FROM clock_timestamp() - t.stamped_at)::float8 FROM ledger_feed_transactions t
            WHERE t.last_position > s.position ORDER BY t.last_position LIMIT 1) AS lag_seconds
        FROM feed_sinks s ORDER BY s.name`,
  );
  const sinks = rows.map((r) => ({
    name: r.name,
    kind: r.kind,
    filter: JSON.parse(r.filter) as Record<string, string>,
    position: Number(r.position),
    lagPositions: Math.max(0, head - Number(r.position)),
    lagSeconds: Math.max(0, Number(r.lag_seconds ?? 0)),
    deliveredEvents: Number(r.delivered_events),
    deliveredAt: toDate(r.delivered_at),
    lastError: r.last_error,
    lastErrorAt: toDate(r.last_error_at),
    deliveredBy: r.delivered_by,
    deadLetters: r.dead_letters,
  }));
  return { head, horizon, unstamped: bounds?.unstamped ?? 0, sinks };
}
