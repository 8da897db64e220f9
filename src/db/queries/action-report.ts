import { sql } from 'drizzle-orm';
import type { Executor } from '../rows.js';
import { queryRows, toNumber } from '../rows.js';

/**
 * One action in one token: how many records, and the value they moved according to the
 * `ledger_movements` view (a bundle moves its items, and only when it succeeded).
 */
export interface ActivityRow {
  action: string;
  tokenTag: string;
  /** The token's symbol from `/info`, else the records' own, else the tag. */
  symbol: string;
  /** Decimals from `/info`; `null` when the token is not listed there. */
  decimals: number | null;
  /** Records of this action whose token is this one (a bundle: its first item's token). */
  records: number;
  /** Rows of `ledger_movements`: the records themselves, or the items of successful bundles. */
  movements: number;
  /** Exact sum of the movements' `amount`, decimal digits in the token's smallest unit. */
  volume: string;
}

/**
 * Records (from `ledger_transactions`) and movements and volumes (from `ledger_movements`) by
 * action and token, biggest groups first. A bundle's items may be in other tokens than the
 * bundle's record, so the two sides are joined on action and token, each side kept when the
 * other has no row.
 */
export async function readActivity(executor: Executor): Promise<ActivityRow[]> {
  const rows = await queryRows<Record<string, unknown>>(
    executor,
    sql`with recorded as (
          select action, token_tag, count(*) as records, min(token_symbol) as symbol
          from ledger_transactions group by action, token_tag
        ), moved as (
          select action, token_tag, count(*) as movements, sum(amount) as volume
          from ledger_movements group by action, token_tag
        ), joined as (
          select coalesce(r.action, m.action) as action, coalesce(r.token_tag, m.token_tag) as token_tag,
                 r.symbol, coalesce(r.records, 0) as records, coalesce(m.movements, 0) as movements,
                 coalesce(m.volume, 0) as volume
          from recorded r full join moved m on m.action = r.action and m.token_tag = r.token_tag
        )
        select j.action, j.token_tag, coalesce(k.symbol, j.symbol, j.token_tag) as symbol, k.decimals,
               j.records::text as records, j.movements::text as movements, j.volume::text as volume
        from joined j left join ledger_tokens k on lower(k.tag) = lower(j.token_tag)
        order by j.records desc, j.movements desc, j.action, j.token_tag`,
  );
  return rows.map((row) => ({
    action: String(row['action']),
    tokenTag: String(row['token_tag']),
    symbol: String(row['symbol']),
    decimals: toNumber(row['decimals']),
    records: toNumber(row['records']) ?? 0,
    movements: toNumber(row['movements']) ?? 0,
    volume: String(row['volume']).replace(/\.0*$/, ''),
  }));
}
