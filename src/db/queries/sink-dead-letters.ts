/** The batches a sink gave up on (`feed_sink_dead_letters`): written as the sink moves past them. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows, toDate } from '../rows.js';

/** A batch given up on. */
export interface DeadLetter {
  firstPosition: number;
  lastPosition: number;
  /** Events in it; null for a stretch that expired before it was delivered. */
  events: number | null;
  /** The batch as sent; null for an expired stretch. */
  body: string | null;
  reason: string;
  attempts: number;
}

/** A stored dead letter. */
export interface StoredDeadLetter extends DeadLetter {
  id: number;
  sink: string;
  createdAt: Date;
}

/**
 * Stores `letter` and moves the sink's position to `position` (past the batch) in one statement,
 * recording the reason as the sink's last error. False (and nothing written) when the lease is
 * no longer `owner`'s.
 */
export async function deadLetterAndAdvance(
  db: Executor,
  input: { name: string; owner: string; position: number; letter: DeadLetter },
): Promise<boolean> {
  const { name, owner, position, letter } = input;
  const rows = await queryRows(
    db,
    sql`WITH moved AS (
          UPDATE feed_sinks SET position = ${position}::bigint, last_error = ${letter.reason.slice(0, 2000)},
            last_error_at = clock_timestamp(), updated_at = clock_timestamp()
          WHERE name = ${name} AND lease_owner = ${owner}
          RETURNING name
        )
        INSERT INTO feed_sink_dead_letters (sink, first_position, last_position, events, body, reason, attempts)
        SELECT name, ${letter.firstPosition}::bigint, ${letter.lastPosition}::bigint, ${letter.events}::int,
          ${letter.body}::text, ${letter.reason}, ${letter.attempts}::int
        FROM moved
        RETURNING id`,
  );
  return rows.length > 0;
}

/** The dead letters of `sink` (absent: of every sink), oldest first (at most `limit`). */
export async function readDeadLetters(
  db: Executor,
  input: { sink?: string | undefined; limit?: number },
): Promise<StoredDeadLetter[]> {
  const rows = await queryRows<{
    id: string;
    sink: string;
    first_position: string;
    last_position: string;
    events: number | null;
    body: string | null;
    reason: string;
    attempts: number;
    created_at: unknown;
  }>(
    db,
    sql`SELECT id::text, sink, first_position::text, last_position::text, events, body, reason, attempts, created_at
        FROM feed_sink_dead_letters WHERE ${input.sink === undefined ? sql`true` : sql`sink = ${input.sink}`}
        ORDER BY id LIMIT ${input.limit ?? 1000}`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    sink: r.sink,
    firstPosition: Number(r.first_position),
    lastPosition: Number(r.last_position),
    events: r.events,
    body: r.body,
    reason: r.reason,
    attempts: r.attempts,
    createdAt: toDate(r.created_at) ?? new Date(0),
  }));
}

/** Removes a dead letter once its batch was delivered again. */
export async function deleteDeadLetter(db: Executor, id: number): Promise<void> {
  await db.execute(sql`DELETE FROM feed_sink_dead_letters WHERE id = ${id}::bigint`);
}
