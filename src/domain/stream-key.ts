import type { TxListFilter } from './model.js';

/**
 * The stable key of a stream, derived from its spec only: the same list with the same filters
 * always maps to the same `sync_streams` row, e.g. `txs`, `txs?action=burn`,
 * `txsByAccount/0xabc…?tokenTag=ethereum-usdc-0x…`. Filters are sorted and URL-encoded. An EVM
 * address is keyed in lower case, since its checksum case does not change the account
 * (`0xAbC…` and `0xabc…` are one stream); other account ids keep their case (Arweave ids are
 * case-sensitive).
 */
export function streamKey(spec: StreamSpec): string {
  const base =
    spec.account === undefined ? 'txs' : `txsByAccount/${encodeURIComponent(accountKey(spec.account))}`;
  const params = new URLSearchParams();
  for (const name of ['action', 'tokenTag', 'withoutAction'] as const) {
    const value = spec[name];
    if (value !== undefined && value !== '') params.set(name, value);
  }
  const query = params.toString();
  return query === '' ? base : `${base}?${query}`;
}

const EVM_ADDRESS = /^0x[0-9a-f]{40}$/i;

/** An account as keyed: EVM addresses in lower case, every other id as given. */
export function accountKey(account: string): string {
  return EVM_ADDRESS.test(account) ? account.toLowerCase() : account;
}

/** Which list a stream follows: the global `/txs` (no account) or one account's, optionally filtered. */
export interface StreamSpec extends TxListFilter {
  account?: string | undefined;
}

/** The spec with only its defined, non-empty fields, as stored beside the stream's key. */
export function normaliseSpec(spec: StreamSpec): StreamSpec {
  const out: StreamSpec = {};
  if (spec.account !== undefined) out.account = spec.account;
  for (const name of ['action', 'tokenTag', 'withoutAction'] as const) {
    const value = spec[name];
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

/** Whether a stream is the whole global list, unfiltered (its ranks are places in the list). */
export function isGlobalList(spec: StreamSpec): boolean {
  return (
    spec.account === undefined &&
    spec.tokenTag === undefined &&
    spec.action === undefined &&
    spec.withoutAction === undefined
  );
}
