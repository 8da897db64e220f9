import { selectMostActiveAccounts, selectStoredBalances } from '../../db/queries/balances.js';
import { type BalanceReport, compareBalances } from '../../verify/balance-check.js';
import type { AppContext } from '../context.js';

/**
 * `verify --balances N`: for the N accounts with the most stored records, the balances the
 * stored movements imply (`ledger_account_balances`) against the service's `/balances/{account}`.
 * Records the service holds but the mirror has not synced yet show as differences: run it
 * right after a sync.
 */
export async function verifyBalances(input: {
  app: Pick<AppContext, 'client' | 'database'>;
  accounts: number;
  signal?: AbortSignal | undefined;
}): Promise<BalanceReport> {
  const db = input.app.database.db;
  const accounts = await selectMostActiveAccounts(db, input.accounts);
  const stored = await selectStoredBalances(db, accounts);
  const report: BalanceReport = { accounts: accounts.length, balances: 0, differences: [] };
  for (const account of accounts) {
    input.signal?.throwIfAborted();
    const service = await input.app.client.balances(account, { signal: input.signal });
    const { compared, differences } = compareBalances(
      account,
      stored.get(account) ?? new Map(),
      service.balances,
    );
    report.balances += compared;
    report.differences.push(...differences);
  }
  return report;
}
