/** The list dialect each service answered with when asked, kept so later runs need not ask. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../rows.js';

/** The dialect a service's lists answered with, `null` when never asked (or forgotten). */
export async function readServiceDialect(db: Executor, listUrl: string): Promise<'key' | 'page' | null> {
  const rows = await queryRows<{ paging: string }>(
    db,
    sql`SELECT paging FROM service_dialects WHERE list_url = ${listUrl}`,
  );
  const paging = rows[0]?.paging;
  return paging === 'key' || paging === 'page' ? paging : null;
}

/** Keeps the dialect a service's lists answered with. */
export async function saveServiceDialect(
  db: Executor,
  input: { listUrl: string; paging: 'key' | 'page'; at: Date },
): Promise<void> {
  await db.execute(sql`
    INSERT INTO service_dialects (list_url, paging, detected_at)
    VALUES (${input.listUrl}, ${input.paging}, ${input.at.toISOString()}::timestamptz)
    ON CONFLICT (list_url) DO UPDATE SET paging = excluded.paging, detected_at = excluded.detected_at
      WHERE service_dialects.paging IS DISTINCT FROM excluded.paging`);
}

/** Forgets it: the next run asks the service again. */
export async function forgetServiceDialect(db: Executor, listUrl: string): Promise<void> {
  await db.execute(sql`DELETE FROM service_dialects WHERE list_url = ${listUrl}`);
}
