/** The tokens of the service's `/info` as last stored (`ledger_tokens`), for the read API. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../rows.js';

/** A stored token: its tag, decimals, and the `tokenList` entry of `/info` as received. */
export interface StoredToken {
  tag: string;
  decimals: number;
  raw: Record<string, unknown>;
}

/** Every stored token, by tag. */
export async function selectStoredTokens(db: Executor): Promise<StoredToken[]> {
  const rows = await queryRows<{ tag: string; decimals: number; raw: unknown }>(
    db,
    sql`SELECT tag, decimals, raw FROM ledger_tokens ORDER BY tag`,
  );
  return rows.map((r) => ({
    tag: r.tag,
    decimals: Number(r.decimals),
    raw: (typeof r.raw === 'string' ? JSON.parse(r.raw) : r.raw) as Record<string, unknown>,
  }));
}
