import { sql } from 'drizzle-orm';
import type { Executor } from '../../src/db/rows.js';
import { queryRows } from '../../src/db/rows.js';

/**
 * How far a stream's walk committed: the page after its checkpoint, or after a batch a writer
 * committed beside it that is not consolidated yet (`sync_walk_commits`); 0 before any commit.
 */
export async function pagesCommitted(db: Executor, key = 'txs'): Promise<number> {
  const [row] = await queryRows<{ next_page: number | null }>(
    db,
    sql`SELECT greatest((SELECT (walk->>'nextPage')::int FROM sync_streams WHERE key = ${key}),
                        (SELECT max((walk->>'nextPage')::int) FROM sync_walk_commits WHERE stream_key = ${key}))
             AS next_page`,
  );
  return row?.next_page ?? 0;
}
