/**
 * The columns of a record that never change once the service has listed it: the 13 signed fields,
 * the signature and the hash. The others (status, record id, timestamp, internal status,
 * target-chain hash, express, and the derived token tag) legitimately change after first sight.
 * A record served again with one of these different is a conflict, never an update.
 */
export const IMMUTABLE_COLUMNS = [
  'token_symbol',
  'action',
  'from_account',
  'to_account',
  'amount',
  'fee',
  'fee_recipient',
  'nonce',
  'token_id',
  'chain_type',
  'chain_id',
  'data',
  'version',
  'sig',
  'ledger_hash',
] as const;

export type ImmutableColumn = (typeof IMMUTABLE_COLUMNS)[number];

const NUMERIC: ReadonlySet<ImmutableColumn> = new Set(['amount', 'fee', 'nonce']);

/** The immutable columns whose values differ between two rows of one record (numerics compared as numbers). */
export function immutableDifferences(
  a: Readonly<Record<ImmutableColumn, string>>,
  b: Readonly<Record<ImmutableColumn, string>>,
): ImmutableColumn[] {
  const canonical = (column: ImmutableColumn, value: string): string =>
    NUMERIC.has(column) ? value.replace(/^0+(?=\d)/, '') : value;
  return IMMUTABLE_COLUMNS.filter((c) => canonical(c, a[c]) !== canonical(c, b[c]));
}
