/** Read-only queries over `ledger_account_balances` for `verify --balances`. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../rows.js';
import { textArray } from '../text-array.js';

/** The `limit` accounts with the most records sent or received (keys as the balances view has them). */
export async function selectMostActiveAccounts(db: Executor, limit: number): Promise<string[]> {
  const rows = await queryRows<{ account: string }>(
    db,
    sql`SELECT account FROM (
          SELECT CASE WHEN a ~ '^0x[0-9a-fA-F]{40}$' THEN lower(a) ELSE a END AS account
          FROM ledger_transactions t, LATERAL (VALUES (t.from_account), (t.to_account)) v(a)
        ) x
        GROUP BY account ORDER BY count(*) DESC, account LIMIT ${limit}::int`,
  );
  return rows.map((r) => r.account);
}

/** Each account's stored balances by token tag (exact integer strings). */
export async function selectStoredBalances(
  db: Executor,
  accounts: readonly string[],
): Promise<Map<string, Map<string, string>>> {
  const rows = await queryRows<{ account: string; token_tag: string; balance: string }>(
    db,
    sql`SELECT account, token_tag, balance::text AS balance FROM ledger_account_balances
        WHERE account = ANY (${textArray([...accounts])}::text[])`,
  );
  const balances = new Map<string, Map<string, string>>(accounts.map((a) => [a, new Map()]));
  for (const row of rows) balances.get(row.account)?.set(row.token_tag, row.balance);
  return balances;
}
