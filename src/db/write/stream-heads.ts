/**
 * The head of each stream as last seen at the service (`sync_streams.head_raw_id`, `head_seen_at`):
 * written by the walks that read page 1 and by the head probe, read for the lag.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../rows.js';

/** A sighting of a stream's head: the newest rawId its page 1 listed, and when. */
export interface HeadSighting {
  key: string;
  rawId: number;
  seenAt: Date;
}

/**
 * `SET` assignments of `sync_streams` recording a sighting. RawIds only grow at the service, so
 * a smaller rawId (a sighting older than the stored one) changes nothing; an equal or larger one
 * moves the time forward; `null` (no sighting) changes nothing, in the same statement text.
 * Both expressions read the row as it was (SQL `UPDATE` semantics).
 */
export function headAssignments(rawId: number | null, seenAt: Date): SQL {
  const at = seenAt.toISOString();
  return sql`head_raw_id = greatest(head_raw_id, ${rawId}::bigint),
        head_seen_at = CASE WHEN ${rawId}::bigint >= coalesce(head_raw_id, ${rawId}::bigint)
                            THEN greatest(head_seen_at, ${at}::timestamptz) ELSE head_seen_at END`;
}

/** Records the sightings of several streams' heads (a stream without a row is left out). */
export async function recordStreamHeads(
  executor: Executor,
  sightings: readonly HeadSighting[],
): Promise<void> {
  for (const s of sightings) {
    await executor.execute(
      sql`UPDATE sync_streams SET ${headAssignments(s.rawId, s.seenAt)} WHERE key = ${s.key}`,
    );
  }
}
