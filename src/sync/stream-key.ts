import type { StreamSpec } from './ports.js';

/**
 * The stable key of a stream, derived from its spec only: the same list with the same filters
 * always maps to the same `sync_streams` row, e.g. `txs`, `txs?action=burn`,
 * `txsByAccount/0xAbC?tokenTag=ethereum-usdc-0x…`. Filters are sorted and URL-encoded; account
 * ids keep their case (Arweave ids are case-sensitive).
 *
 * Same format as `src/db/stream-key.ts` (the store's copy); the two must stay identical.
 */
export function streamKey(spec: StreamSpec): string {
  const base = spec.account === undefined ? 'txs' : `txsByAccount/${encodeURIComponent(spec.account)}`;
  const params = new URLSearchParams();
  for (const name of ['action', 'tokenTag', 'withoutAction'] as const) {
    const value = spec[name];
    if (value !== undefined && value !== '') params.set(name, value);
  }
  const query = params.toString();
  return query === '' ? base : `${base}?${query}`;
}
