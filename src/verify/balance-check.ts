/** `verify --balances`: stored balances against the service's, compared without I/O. */

/** One account's balance of one token that differs; amounts are exact decimal strings ("0" when absent). */
export interface BalanceDifference {
  account: string;
  tag: string;
  stored: string;
  service: string;
}

/** What `verify --balances` found. */
export interface BalanceReport {
  accounts: number;
  /** Non-zero balances compared (on either side). */
  balances: number;
  /** Every difference, in the order the accounts were checked (most active first). */
  differences: BalanceDifference[];
}

/** The differences between one account's stored balances and the service's, by token tag; zero equals absent. */
export function compareBalances(
  account: string,
  stored: ReadonlyMap<string, string>,
  service: ReadonlyArray<{ tag: string; amount: string }>,
): { compared: number; differences: BalanceDifference[] } {
  const theirs = new Map<string, string>();
  for (const b of service) theirs.set(b.tag, canonical(b.amount));
  const ours = new Map<string, string>();
  for (const [tag, amount] of stored) ours.set(tag, canonical(amount));
  const tags = [...new Set([...ours.keys(), ...theirs.keys()])].sort();
  const differences: BalanceDifference[] = [];
  let compared = 0;
  for (const tag of tags) {
    const mine = ours.get(tag) ?? '0';
    const other = theirs.get(tag) ?? '0';
    if (mine === '0' && other === '0') continue;
    compared++;
    if (mine !== other) differences.push({ account, tag, stored: mine, service: other });
  }
  return { compared, differences };
}

/** The report as text lines; the first difference is named in full. */
export function formatBalances(report: BalanceReport, listed = 20): string[] {
  const head = `balances: ${report.accounts} account(s), ${report.balances} token balance(s) compared with the service`;
  if (report.differences.length === 0) return [`${head}: all equal`];
  const lines = [`${head}: ${report.differences.length} differ`];
  for (const d of report.differences.slice(0, listed)) {
    lines.push(`  ${d.account} ${d.tag}: stored ${d.stored}, service ${d.service}`);
  }
  if (report.differences.length > listed) lines.push(`  … and ${report.differences.length - listed} more`);
  return lines;
}

/** An integer amount without leading zeros (a sign kept). */
function canonical(amount: string): string {
  const negative = amount.startsWith('-');
  const digits = (negative ? amount.slice(1) : amount).replace(/^0+(?=\d)/, '');
  return negative && digits !== '0' ? `-${digits}` : digits;
}
