/**
 * Random requests of the service's query endpoints, for differential tests of the mirror's read
 * API against the simulator: both list dialects, every filter, cursors and pages in and out of
 * range, look-ups of known and unknown hashes, and bad parameters that must fail alike.
 */
import type { Rng } from './seed.js';

/** What the requests are drawn from: values the ledger holds, and the head's rawId. */
export interface QueryUniverse {
  accounts: readonly string[];
  tags: readonly string[];
  ledgerHashes: readonly string[];
  mintHashes: readonly string[];
  headRawId: number;
}

const ACTIONS = ['mint', 'transfer', 'burn', 'bundle', 'set', 'nope'];
const BAD_KEY_PARAMS: ReadonlyArray<[string, string]> = [
  ['cursor', 'abc'],
  ['cursor', '-1'],
  ['cursor', '1234567890123456'],
  ['order', 'up'],
  ['count', '-5'],
  ['count', 'x'],
];
const BAD_PAGES = ['0', 'x', '-1', '1234567890'];

/** Swaps the case of some letters: EVM accounts and hex hashes match in any case, others must not. */
function recase(rng: Rng, text: string): string {
  if (!rng.chance(0.3)) return text;
  return [...text].map((c) => (rng.chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join('');
}

function filters(rng: Rng, u: QueryUniverse, params: URLSearchParams, keyDialect: boolean): void {
  if (rng.chance(0.3)) {
    const count = keyDialect && rng.chance(0.3) ? 2 : 1;
    const tags = Array.from({ length: count }, () => (rng.chance(0.1) ? 'nochain-x-0' : rng.pick(u.tags)));
    params.set('tokenTag', tags.join(','));
  }
  if (rng.chance(0.25)) params.set('action', rng.pick(ACTIONS));
  if (rng.chance(0.15)) params.set('withoutAction', rng.pick(ACTIONS));
}

function account(rng: Rng, u: QueryUniverse): string {
  return rng.chance(0.08) ? `eid${rng.int(1, 1e9)}` : recase(rng, rng.pick(u.accounts));
}

function listPath(rng: Rng, u: QueryUniverse, params: URLSearchParams, keyDialect: boolean): string {
  const where = rng.int(0, 3);
  if (where === 1) return `/txs/${encodeURIComponent(account(rng, u))}`;
  if (where === 2) return `/txsByAccount/${encodeURIComponent(account(rng, u))}`;
  if (where === 3 && keyDialect) params.set('address', account(rng, u));
  return '/txs';
}

function keyList(rng: Rng, u: QueryUniverse): string {
  const params = new URLSearchParams();
  const path = listPath(rng, u, params, true);
  if (rng.chance(0.6)) params.set('cursor', String(rng.int(0, u.headRawId + 5)));
  if (rng.chance(0.6)) params.set('order', rng.pick(['asc', 'ASC', 'desc', 'Desc']));
  if (rng.chance(0.7)) params.set('count', String(rng.pick([0, 1, 3, 10, 50, 100, 150])));
  if (!params.has('cursor') && !params.has('order') && !params.has('count')) params.set('count', '7');
  filters(rng, u, params, true);
  if (rng.chance(0.05)) params.set(...rng.pick(BAD_KEY_PARAMS));
  return `${path}?${params}`;
}

function pageList(rng: Rng, u: QueryUniverse): string {
  const params = new URLSearchParams();
  const path = listPath(rng, u, params, false);
  if (rng.chance(0.8)) params.set('page', String(rng.chance(0.7) ? rng.int(1, 5) : rng.int(1, 400)));
  filters(rng, u, params, false);
  if (rng.chance(0.05)) params.set('page', rng.pick(BAD_PAGES));
  const query = params.toString();
  return query === '' ? path : `${path}?${query}`;
}

function lookup(rng: Rng, u: QueryUniverse): string {
  const byMint = rng.chance(0.4);
  const known = byMint ? u.mintHashes : u.ledgerHashes;
  const hash = rng.chance(0.85) && known.length > 0 ? recase(rng, rng.pick(known)) : `0x${'ab'.repeat(32)}`;
  const path = byMint ? rng.pick(['minted', 'mintedTxByChainTxHash']) : rng.pick(['tx', 'txsByHash']);
  return `/${path}/${encodeURIComponent(hash)}`;
}

function reference(rng: Rng, u: QueryUniverse): string {
  const tag = rng.chance(0.9) ? rng.pick(u.tags) : 'nochain-x-0';
  switch (rng.int(0, 4)) {
    case 0:
      return '/fees';
    case 1:
      return `/fee/${encodeURIComponent(tag)}`;
    case 2:
      return `/balances/${encodeURIComponent(account(rng, u))}`;
    default:
      return `/balance/${encodeURIComponent(tag)}/${encodeURIComponent(account(rng, u))}`;
  }
}

/** One random request path (with its query). */
export function randomQuery(rng: Rng, u: QueryUniverse): string {
  const kind = rng.next();
  if (kind < 0.45) return keyList(rng, u);
  if (kind < 0.75) return pageList(rng, u);
  if (kind < 0.9) return lookup(rng, u);
  return reference(rng, u);
}
