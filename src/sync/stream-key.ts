import type { StreamSpec } from './ports.js';

/**
 * The stable key of a stream, derived from its spec only: the same list with the same filters
 * always maps to the same `sync_streams` row. Accounts are compared case-insensitively when they
 * are EVM addresses (checksum case varies), case-sensitively otherwise (Arweave ids).
 *
 * Examples: `txs`, `txs?action=burn`, `account:0xabc…`, `account:eid1?tokenTag=ethereum-usdt-0x…`.
 */
export function streamKey(spec: StreamSpec): string {
  const base = spec.account === undefined ? 'txs' : `account:${normaliseAccount(spec.account)}`;
  const params: string[] = [];
  if (spec.tokenTag) params.push(`tokenTag=${spec.tokenTag}`);
  if (spec.action) params.push(`action=${spec.action}`);
  if (spec.withoutAction) params.push(`withoutAction=${spec.withoutAction}`);
  return params.length === 0 ? base : `${base}?${params.join('&')}`;
}

function normaliseAccount(account: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(account) ? account.toLowerCase() : account;
}
