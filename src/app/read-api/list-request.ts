/**
 * A list request of the read API read as the service (the simulator, its reference) reads it:
 * the dialect by the same rule, the key and page parameters by the same shared code, plus the
 * mirror's own `since`/`until`. Pure.
 */
import type { RecordFilter } from '../../db/queries/read-api/list-filter-sql.js';
import {
  isKeyQueryError,
  type KeyLimits,
  type KeyQuery,
  listDialect,
  parseKeyQuery,
  parsePage,
} from '../../service-query/key-query.js';
import { tokenIndexesOf } from '../../service-query/token-tags.js';

/**
 * The most records one key answer holds: the Go client's `count=100` is the largest the service
 * is known to accept. More is cut silently (the answer says `hasNextPage`), as a capped service does.
 */
export const READ_MAX_COUNT = 100;

/** The key limits the read API applies: the silent cap above, no refusal. */
export const READ_KEY_LIMITS: KeyLimits = { maxCount: READ_MAX_COUNT, refuseCountAbove: 0 };

/** A list request understood: which records, in which dialect and window. */
export type ListRequest =
  | { dialect: 'key'; filter: RecordFilter; query: KeyQuery }
  | { dialect: 'page'; filter: RecordFilter; page: number; accid: string | undefined };

/** A refused list request: the `err_…` code answered with HTTP 400. */
export interface ListRequestError {
  error: string;
}

/**
 * Reads a list request. `account` is the path's (`/txs/{account}`, `/txsByAccount/{account}`);
 * the key dialect also takes `address`. `knownTags` are the stored `/info` tags a key request's
 * comma list of tags is read against.
 */
export function readListRequest(input: {
  params: URLSearchParams;
  account: string | undefined;
  knownTags: readonly string[];
}): ListRequest | ListRequestError {
  const { params, account } = input;
  const range = readTimeRange(params);
  if ('error' in range) return range;
  const actions = {
    ...(params.get('action') ? { action: params.get('action')! } : {}),
    ...(params.get('withoutAction') ? { withoutAction: params.get('withoutAction')! } : {}),
  };
  const tokenTag = params.get('tokenTag');
  if (listDialect('both', params) === 'page') {
    const page = parsePage(params.get('page'));
    if (page === undefined) return { error: 'err_invalid_page' };
    // The page dialect takes `tokenTag` as one tag and knows no `address`.
    const filter: RecordFilter = {
      ...(account !== undefined ? { account } : {}),
      ...(tokenTag ? { tags: [tokenTag] } : {}),
      ...actions,
      ...range,
    };
    return { dialect: 'page', filter, page, accid: account };
  }
  const query = parseKeyQuery(params, READ_KEY_LIMITS);
  if (isKeyQueryError(query)) return query;
  const listed = account ?? (params.get('address') || undefined);
  const tags = input.knownTags;
  const filter: RecordFilter = {
    ...(listed !== undefined ? { account: listed } : {}),
    ...(tokenTag ? { tags: tokenIndexesOf(tokenTag, tags).map((i) => tags[i]!) } : {}),
    ...actions,
    ...range,
  };
  return { dialect: 'key', filter, query };
}

/** Milliseconds (up to 15 digits) or an ISO 8601 time. */
const MS = /^\d{1,15}$/;
const ISO = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/** `since` (inclusive) and `until` (exclusive) as ISO times; absent or empty = unbounded. */
export function readTimeRange(
  params: URLSearchParams,
): { since?: string; until?: string } | ListRequestError {
  const out: { since?: string; until?: string } = {};
  for (const name of ['since', 'until'] as const) {
    // A `+` of an offset sent unencoded arrives as a space.
    const value = params.get(name)?.replace(/ (\d{2}:?\d{2})$/, '+$1');
    if (value === undefined || value === '') continue;
    const ms = MS.test(value) ? Number(value) : ISO.test(value) ? Date.parse(value) : Number.NaN;
    if (!Number.isFinite(ms) || ms > 8.64e15) return { error: `err_invalid_${name}` };
    out[name] = new Date(ms).toISOString();
  }
  return out;
}
