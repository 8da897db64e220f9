import { sql } from 'drizzle-orm';
import type { Executor } from '../../src/db/rows.js';
import { queryRows } from '../../src/db/rows.js';

/** How far a stream's walk by page number committed: the page after its checkpoint; 0 before any commit. */
export async function pagesCommitted(db: Executor, key = 'txs'): Promise<number> {
  const [row] = await queryRows<{ next_page: number | null }>(
    db,
    sql`SELECT (walk->>'nextPage')::int AS next_page FROM sync_streams WHERE key = ${key}`,
  );
  return row?.next_page ?? 0;
}
