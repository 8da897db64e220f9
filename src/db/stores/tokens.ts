import { sql } from 'drizzle-orm';
import type { LedgerToken } from '../../domain/model.js';
import type { Database } from '../connect.js';
import { queryOne } from '../rows.js';
import { textArray } from '../text-array.js';
import { FOLDED_TAGS } from '../write/record-write-sql.js';

/** What {@link upsertTokens} changed. */
export interface TokenWriteCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  /** Stored transactions whose token tag was corrected to the `/info` tag matching it. */
  retagged: number;
}

/**
 * Stores the tokens of `/info` (keyed by tag; unchanged tokens are not rewritten), then corrects
 * the `token_tag` of stored transactions to the `/info` tag matching it (see {@link retagTransactions}):
 * `/info` tags are authoritative.
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
  const result = await queryOne<{ inserted: number; written: number }>(
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
    )
    SELECT (SELECT count(*)::int FROM upserted u WHERE u.tag NOT IN (SELECT tag FROM old)) AS inserted,
           (SELECT count(*)::int FROM upserted) AS written
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
    retagged: await retagTransactions(database, now),
  };
}

/**
 * Gives every stored transaction whose `token_tag` is no token's tag the token tag matching it
 * case-insensitively, by the rule of the record writes (`FOLDED_TAGS`); returns how many changed.
 * Run after the tokens committed, at every listing: a record written while a new token was being
 * stored (its write's snapshot older than the token) kept its derived tag, and the next listing
 * corrects it. Cheap on a large table: the distinct stored tags are read from the token index,
 * one probe each, and only the rows of a tag to correct are touched.
 */
async function retagTransactions(database: Pick<Database, 'db'>, now: string): Promise<number> {
  const result = await queryOne<{ retagged: number }>(
    database.db,
    sql`
    WITH RECURSIVE stored_tags AS (
      (SELECT token_tag FROM ledger_transactions ORDER BY token_tag LIMIT 1)
      UNION ALL
      SELECT (SELECT x.token_tag FROM ledger_transactions x WHERE x.token_tag > s.token_tag ORDER BY x.token_tag LIMIT 1)
      FROM stored_tags s WHERE s.token_tag IS NOT NULL
    ),
    folded_tags AS (${FOLDED_TAGS}),
    mismatched AS (
      SELECT s.token_tag AS stored, f.tag
      FROM stored_tags s JOIN folded_tags f ON f.folded = lower(s.token_tag)
      WHERE s.token_tag <> f.tag AND NOT EXISTS (SELECT 1 FROM ledger_tokens k WHERE k.tag = s.token_tag)
    ),
    retagged AS (
      UPDATE ledger_transactions x SET token_tag = m.tag, updated_at = ${now}::timestamptz
      FROM mismatched m WHERE x.token_tag = m.stored
      RETURNING x.raw_id
    )
    SELECT count(*)::int AS retagged FROM retagged
    `,
  );
  return Number(result.retagged);
}

/** When `/info` was last read into the table (the latest `listed_at`); `null` when never. */
export async function tokensListedAt(database: Pick<Database, 'db'>): Promise<Date | null> {
  const row = await queryOne<{ at: string | null }>(
    database.db,
    sql`SELECT max(listed_at)::text AS at FROM ledger_tokens`,
  );
  return row.at === null ? null : new Date(row.at);
}
