/**
 * One account's balance per token tag from the stored movements up to a rawId, as `ledger_account_balances`
 * computes it (see `src/db/schema/views.ts`), but found through the account indexes rather than
 * by grouping every account.
 */
import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../rows.js';
import { accountMatch, accountMatchByLowerCase } from './list-filter-sql.js';

/** Each token tag the account's movements touch, with its balance (an exact integer string). */
export async function selectAccountBalances(
  db: Executor,
  account: string,
  upTo: number,
): Promise<Map<string, string>> {
  const rows = await queryRows<{ token_tag: string; balance: string }>(db, accountBalancesSql(account, upTo));
  return new Map(rows.map((r) => [r.token_tag, r.balance]));
}

/** The statement of {@link selectAccountBalances}: the movements of records at or below rawId `upTo`. */
export function accountBalancesSql(account: string, upTo: number): SQL {
  const bound = sql`t.raw_id <= ${upTo}`;
  const from = sql`${accountMatch(sql.raw('t.from_account'), account)} AND ${bound}`;
  const to = sql`${accountMatch(sql.raw('t.to_account'), account)} AND ${bound}`;
  const feeTo = sql`${accountMatchByLowerCase(sql.raw('t.fee_recipient'), account)} AND ${bound}`;
  const itemFrom = sql`${accountMatch(sql.raw('b.from_account'), account)} AND ${bound}`;
  const itemTo = sql`${accountMatch(sql.raw('b.to_account'), account)} AND ${bound}`;
  return sql`SELECT d.token_tag, sum(d.delta)::text AS balance FROM (
          SELECT t.token_tag, t.amount AS delta FROM ledger_transactions t
          WHERE ${to} AND t.action IN ('mint', 'transfer')
          UNION ALL
          SELECT t.token_tag, -t.amount FROM ledger_transactions t
          WHERE ${from} AND t.action IN ('transfer', 'burn')
          UNION ALL
          SELECT t.token_tag, -t.fee FROM ledger_transactions t
          WHERE ${from} AND t.action IN ('transfer', 'burn', 'bundle') AND t.fee <> 0
          UNION ALL
          SELECT t.token_tag, t.fee FROM ledger_transactions t
          WHERE ${feeTo} AND t.action IN ('transfer', 'burn', 'bundle') AND t.fee <> 0
          UNION ALL
          SELECT b.tag, -b.amount FROM ledger_bundle_items b JOIN ledger_transactions t ON t.raw_id = b.raw_id
          WHERE ${itemFrom} AND t.action = 'bundle' AND t.internal_status_code = 'success'
          UNION ALL
          SELECT b.tag, b.amount FROM ledger_bundle_items b JOIN ledger_transactions t ON t.raw_id = b.raw_id
          WHERE ${itemTo} AND t.action = 'bundle' AND t.internal_status_code = 'success'
        ) d GROUP BY d.token_tag`;
}
