import { sql } from 'drizzle-orm';
import type { Executor } from './rows.js';
import { queryRows, toNumber } from './rows.js';

/** Records of one action in one token, with their summed amount in the token's smallest unit. */
export interface ActivityRow {
  action: string;
  tokenTag: string;
  /** The token's symbol from `/info`, else the records' own. */
  symbol: string;
  /** Decimals from `/info`; `null` when the token is not listed there. */
  decimals: number | null;
  records: number;
  /** Exact sum of `amount`, decimal digits. */
  volume: string;
}

/** Records and volumes grouped by action and token, biggest groups first. */
export async function readActivity(executor: Executor): Promise<ActivityRow[]> {
  const rows = await queryRows<Record<string, unknown>>(
    executor,
    sql`select t.action, t.token_tag, coalesce(k.symbol, min(t.token_symbol)) as symbol,
          k.decimals, count(*)::text as records, coalesce(sum(t.amount), 0)::text as volume
        from ledger_transactions t
        left join ledger_tokens k on lower(k.tag) = lower(t.token_tag)
        group by t.action, t.token_tag, k.symbol, k.decimals
        order by count(*) desc, t.action, t.token_tag`,
  );
  return rows.map((row) => ({
    action: String(row['action']),
    tokenTag: String(row['token_tag']),
    symbol: String(row['symbol']),
    decimals: toNumber(row['decimals']),
    records: toNumber(row['records']) ?? 0,
    volume: String(row['volume']).replace(/\.0*$/, ''),
  }));
}
