/**
 * How a stream's latest run read its list, kept on its `sync_runs` row: the client lowers the
 * count while it runs when the service refuses more, and forgets it when the process ends, so
 * `status` could not tell it otherwise once the stream is idle.
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../rows.js';

/** Records the dialect (and by key the count asked) on the stream's latest run. */
export async function recordRunPaging(
  db: Executor,
  input: { streamKey: string; paging: 'key' | 'page'; keyCount: number | null },
): Promise<void> {
  const keyCount = input.paging === 'key' ? input.keyCount : null;
  await db.execute(sql`
    UPDATE sync_runs SET paging = ${input.paging}, key_count = ${keyCount}::int
    WHERE stream_key = ${input.streamKey}
      AND fence = (SELECT max(fence) FROM sync_runs WHERE stream_key = ${input.streamKey})`);
}
