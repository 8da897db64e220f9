/**
 * A sink's row in `feed_sinks`: its lease (one deliverer at a time across processes) and its
 * stored position. Every write after the lease is taken names the owner, so a runner whose lease
 * passed to another writes nothing more. Times are the database's, the one clock every process
 * shares.
 */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../rows.js';

/** Who asks for a sink's lease, and for how long. */
export interface SinkLeaseRequest {
  name: string;
  kind: string;
  /** The filter as configured (shown on the status page). */
  filter: Record<string, string>;
  owner: string;
  leaseMs: number;
}

/** Errors longer than this are cut: a far side may answer pages of HTML. */
const ERROR_LIMIT = 2000;

/**
 * Takes the sink's lease when it is free, expired or already `owner`'s (then it is renewed), and
 * answers the stored position; `null` while another runner holds it. A sink seen for the first
 * time starts at the feed's horizon: the oldest event still kept.
 */
export async function acquireSinkLease(db: Executor, request: SinkLeaseRequest): Promise<number | null> {
  const { name, kind, owner, leaseMs } = request;
  const [row] = await queryRows<{ position: string }>(
    db,
    sql`INSERT INTO feed_sinks AS s (name, kind, filter, position, lease_owner, lease_expires_at)
        VALUES (${name}, ${kind}, ${JSON.stringify(request.filter)}::jsonb,
          COALESCE((SELECT retained_after FROM ledger_feed_horizon WHERE id = 1), 0),
          ${owner}, clock_timestamp() + ${leaseMs} * interval '1 millisecond')
        ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, filter = excluded.filter,
          lease_owner = excluded.lease_owner, lease_expires_at = excluded.lease_expires_at,
          updated_at = clock_timestamp()
        WHERE s.lease_owner IS NULL OR s.lease_owner = excluded.lease_owner
          OR s.lease_expires_at IS NULL OR s.lease_expires_at <= clock_timestamp()
        RETURNING s.position::text AS position`,
  );
  return row === undefined ? null : Number(row.position);
}

/** Extends `owner`'s lease by `leaseMs` from now; false when it is no longer theirs. */
export async function renewSinkLease(
  db: Executor,
  input: { name: string; owner: string; leaseMs: number },
): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`UPDATE feed_sinks SET lease_expires_at = clock_timestamp() + ${input.leaseMs} * interval '1 millisecond'
        WHERE name = ${input.name} AND lease_owner = ${input.owner} RETURNING 1`,
  );
  return rows.length > 0;
}

/** Lets go of `owner`'s lease, so another runner takes the sink at once. */
export async function releaseSinkLease(db: Executor, input: { name: string; owner: string }): Promise<void> {
  await db.execute(
    sql`UPDATE feed_sinks SET lease_owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp()
        WHERE name = ${input.name} AND lease_owner = ${input.owner}`,
  );
}

/**
 * Moves the sink's position to `position` after `delivered` events were acknowledged (0: the
 * stretch held none that passed the filter). False when the lease is no longer `owner`'s.
 */
export async function advanceSink(
  db: Executor,
  input: { name: string; owner: string; position: number; delivered: number },
): Promise<boolean> {
  const { name, owner, position, delivered } = input;
  const rows = await queryRows(
    db,
    sql`UPDATE feed_sinks SET position = ${position}::bigint,
          delivered_events = delivered_events + ${delivered}::bigint,
          delivered_at = CASE WHEN ${delivered}::bigint > 0 THEN clock_timestamp() ELSE delivered_at END,
          updated_at = clock_timestamp()
        WHERE name = ${name} AND lease_owner = ${owner} RETURNING 1`,
  );
  return rows.length > 0;
}

/** Records a failure of the sink (a try that failed, a stretch given up): shown on the status page. */
export async function recordSinkError(
  db: Executor,
  input: { name: string; owner: string; error: string },
): Promise<void> {
  await db.execute(
    sql`UPDATE feed_sinks SET last_error = ${input.error.slice(0, ERROR_LIMIT)},
          last_error_at = clock_timestamp(), updated_at = clock_timestamp()
        WHERE name = ${input.name} AND lease_owner = ${input.owner}`,
  );
}
