/**
 * Consolidating a walk written by several writers: the stream's checkpoint moves over the lane
 * commits (`sync_walk_commits`) that follow it without a gap, their counts go to their runs, and
 * their rows are deleted.
 */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../rows.js';

/** What {@link consolidateWalkCommits} did. */
export interface Consolidation {
  /** False when the stream was not at `fence` (a stale lease): then nothing changed. */
  fenced: boolean;
  /** The stream's checkpoint afterwards (JSON text), null when no walk is in progress. */
  walk: string | null;
}

/**
 * Moves the stream's `walk` over the unbroken run of lane commits that starts at its `nextPage`
 * (page 1 when no walk is stored yet; each one's `from_page` is the `nextPage` of the one before,
 * and each one comes from the same run of the walk as the one before: two runs' batches were
 * fetched at different times, and chaining them could skip records that moved in between). With `fence`, only while the
 * stream is at that fence; with `extendLease`, the lease is also extended by its length (lane
 * commits do not extend it). With `dropRest`, the lane commits past a gap are dropped as well
 * (their counts still go to their runs, as those records were written): when a lease is taken,
 * no lane of the walk runs, so they are leftovers of an attempt that ended, and their pages,
 * fetched before the ones the walk resumes with, must never count (records that moved down the
 * list in between would be skipped). They are walked again.
 *
 * Concurrent lane commits are not waited for: those the statement does not see stay for the next
 * consolidation. The stream row is updated only if its checkpoint is still the one the chain was
 * built from.
 */
export async function consolidateWalkCommits(
  executor: Executor,
  input: {
    key: string;
    fence?: number | undefined;
    now: Date;
    extendLease?: boolean;
    dropRest?: boolean;
  },
): Promise<Consolidation> {
  const now = input.now.toISOString();
  const fence = input.fence ?? null;
  const extend = input.extendLease === true;
  const dropRest = input.dropRest === true;
  const [row] = await queryRows<{ fenced: number; walk: string | null }>(
    executor,
    sql`
      WITH RECURSIVE s AS (
        SELECT key, walk FROM sync_streams
        WHERE key = ${input.key} AND (${fence}::bigint IS NULL OR lease_fence = ${fence}::bigint)
      ),
      chain AS (
        SELECT * FROM (
          SELECT c.fence, c.from_page, c.walk, 1 AS depth
          FROM sync_walk_commits c JOIN s ON c.stream_key = s.key
          -- Every walk starts at page 1; a stream's walk is stored only once consolidated. The run
          -- that wrote the checkpoint goes on from it; another one only where it resumed there.
          WHERE c.from_page = coalesce((s.walk->>'nextPage')::int, 1)
          ORDER BY c.walk->'attempt' IS NOT DISTINCT FROM s.walk->'attempt' DESC, c.committed_at
          LIMIT 1
        ) first
        UNION ALL
        SELECT c.fence, c.from_page, c.walk, chain.depth + 1
        FROM chain JOIN sync_walk_commits c
          ON c.stream_key = ${input.key} AND c.from_page = (chain.walk->>'nextPage')::int
         AND c.from_page > chain.from_page AND c.walk->'attempt' IS NOT DISTINCT FROM chain.walk->'attempt'
      ),
      last AS (
        SELECT walk FROM chain ORDER BY depth DESC LIMIT 1
      ),
      moved AS (
        UPDATE sync_streams t SET
          walk = coalesce((SELECT walk FROM last), t.walk),
          lease_expires_at = CASE WHEN ${extend}::boolean AND t.lease_ms IS NOT NULL
            THEN greatest(t.lease_expires_at, ${now}::timestamptz + t.lease_ms * interval '1 millisecond')
            ELSE t.lease_expires_at END,
          updated_at = ${now}::timestamptz
        FROM s
        WHERE t.key = s.key AND t.walk IS NOT DISTINCT FROM s.walk
          AND (${fence}::bigint IS NULL OR t.lease_fence = ${fence}::bigint)
        RETURNING t.walk
      ),
      folded AS (
        DELETE FROM sync_walk_commits c
        WHERE c.stream_key = ${input.key} AND EXISTS (SELECT 1 FROM moved)
          AND (${dropRest}::boolean OR (c.fence, c.from_page) IN (SELECT fence, from_page FROM chain))
        RETURNING c.*
      ),
      credited AS (
        UPDATE sync_runs r SET
          pages = r.pages + f.pages,
          inserted = r.inserted + f.inserted,
          updated = r.updated + f.updated,
          unchanged = r.unchanged + f.unchanged,
          rejected = r.rejected + f.rejected,
          conflicts = r.conflicts + f.conflicts
        FROM (
          SELECT fence, sum(pages)::int AS pages, sum(inserted)::int AS inserted, sum(updated)::int AS updated,
                 sum(unchanged)::int AS unchanged, sum(rejected)::int AS rejected, sum(conflicts)::int AS conflicts
          FROM folded GROUP BY fence
        ) f
        WHERE r.stream_key = ${input.key} AND r.fence = f.fence
      )
      SELECT (SELECT count(*)::int FROM moved) AS fenced, (SELECT walk::text FROM moved) AS walk
    `,
  );
  return { fenced: Number(row?.fenced ?? 0) > 0, walk: row?.walk ?? null };
}

/** Whether a stream has lane commits not consolidated yet (cheap: one index probe). */
export async function hasWalkCommits(executor: Executor, key: string): Promise<boolean> {
  const rows = await queryRows<{ one: number }>(
    executor,
    sql`SELECT 1 AS one FROM sync_walk_commits WHERE stream_key = ${key} LIMIT 1`,
  );
  return rows.length > 0;
}
