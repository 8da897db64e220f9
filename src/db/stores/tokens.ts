import { sql } from 'drizzle-orm';
import type { LedgerToken } from '../../domain/model.js';
import type { Database } from '../connect.js';
import { queryOne } from '../rows.js';
import { textArray } from '../text-array.js';

/** What {@link upsertTokens} changed. */
export interface TokenWriteCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  /** Stored transactions whose token tag was corrected to a new `/info` tag. */
  retagged: number;
}

/**
 * Stores the tokens of `/info` (keyed by tag; unchanged tokens are not rewritten). A token new
 * to the database also corrects the `token_tag` of transactions stored before it was known
 * whose derived tag matches it case-insensitively: `/info` tags are authoritative.
 */
export async function upsertTokens(
  database: Pick<Database, 'db'>,
  tokens: readonly LedgerToken[],
  options: { now?: Date } = {},
): Promise<TokenWriteCounts> {
  const byTag = new Map(tokens.map((t) => [t.tag, t]));
  if (byTag.size === 0) return { inserted: 0, updated: 0, unchanged: 0, retagged: 0 };
  const rows = JSON.stringify(
    [...byTag.values()].map((t) => ({
      tag: t.tag,
      symbol: t.symbol,
      decimals: t.decimals,
      chain_type: t.chainType,
      chain_id: t.chainID,
      token_id: t.id,
      raw: t.raw,
    })),
  );
  const now = (options.now ?? new Date()).toISOString();
  const result = await queryOne<{ inserted: number; written: number; retagged: number }>(
    database.db,
    sql`
    WITH input AS (
      SELECT * FROM json_to_recordset(${rows}::json) AS r(
        tag text, symbol text, decimals integer, chain_type text, chain_id text, token_id text, raw jsonb)
    ),
    old AS (SELECT t.tag FROM ledger_tokens t WHERE t.tag IN (SELECT tag FROM input)),
    upserted AS (
      INSERT INTO ledger_tokens AS t (tag, symbol, decimals, chain_type, chain_id, token_id, raw, updated_at)
      SELECT tag, symbol, decimals, chain_type, chain_id, token_id, raw, ${now}::timestamptz FROM input ORDER BY tag
      ON CONFLICT (tag) DO UPDATE SET
        symbol = excluded.symbol, decimals = excluded.decimals, chain_type = excluded.chain_type,
        chain_id = excluded.chain_id, token_id = excluded.token_id, raw = excluded.raw, updated_at = excluded.updated_at
      WHERE (t.symbol, t.decimals, t.chain_type, t.chain_id, t.token_id, t.raw)
        IS DISTINCT FROM (excluded.symbol, excluded.decimals, excluded.chain_type, excluded.chain_id, excluded.token_id, excluded.raw)
      RETURNING t.tag
    ),
    fresh AS (SELECT u.tag FROM upserted u WHERE u.tag NOT IN (SELECT tag FROM old)),
    retagged AS (
      UPDATE ledger_transactions x SET token_tag = f.tag, updated_at = ${now}::timestamptz
      FROM fresh f
      WHERE lower(x.token_tag) = lower(f.tag) AND x.token_tag <> f.tag
        AND NOT EXISTS (SELECT 1 FROM ledger_tokens k WHERE k.tag = x.token_tag)
      RETURNING x.raw_id
    )
    SELECT (SELECT count(*)::int FROM fresh) AS inserted,
           (SELECT count(*)::int FROM upserted) AS written,
           (SELECT count(*)::int FROM retagged) AS retagged
    `,
  );
  await database.db.execute(
    sql`UPDATE ledger_tokens SET listed_at = ${now}::timestamptz WHERE tag = ANY(${textArray([...byTag.keys()])}::text[])`,
  );
  const inserted = Number(result.inserted);
  const written = Number(result.written);
  return {
    inserted,
    updated: written - inserted,
    unchanged: byTag.size - written,
    retagged: Number(result.retagged),
  };
}

/** When `/info` was last read into the table (the latest `listed_at`); `null` when never. */
export async function tokensListedAt(database: Pick<Database, 'db'>): Promise<Date | null> {
  const row = await queryOne<{ at: string | null }>(
    database.db,
    sql`SELECT max(listed_at)::text AS at FROM ledger_tokens`,
  );
  return row.at === null ? null : new Date(row.at);
}
