import { queryString } from './api-paths.js';
import type { TxKeyQuery, TxListQuery } from './api-types.js';

/** The list query string; an empty filter is no filter, and `page` must be >= 1. */
export function listQuery(query: TxListQuery): string {
  if (query.page !== undefined && (!Number.isSafeInteger(query.page) || query.page < 1)) {
    throw new TypeError(`page must be a whole number >= 1 (got ${query.page})`);
  }
  return queryString({
    page: query.page,
    tokenTag: nonEmpty(query.tokenTag),
    action: nonEmpty(query.action),
    withoutAction: nonEmpty(query.withoutAction),
  });
}

/**
 * The key-paging query string: `cursor` only when > 0 (it is exclusive), `order` in lower case,
 * `count` records, and `address` for one account's list in the `/txs?address=` form. Throws
 * `TypeError` for a cursor that is not a whole number >= 0, an unknown order or a count < 1.
 */
export function keyPageQuery(query: TxKeyQuery, count: number, address?: string): string {
  const { cursor } = query;
  if (cursor !== undefined && (!Number.isSafeInteger(cursor) || cursor < 0)) {
    throw new TypeError(`cursor must be a non-negative whole number (got ${cursor})`);
  }
  if (query.order !== 'asc' && query.order !== 'desc') {
    throw new TypeError(`order must be 'asc' or 'desc' (got ${JSON.stringify(query.order)})`);
  }
  if (!Number.isSafeInteger(count) || count < 1) throw new TypeError(`count must be >= 1 (got ${count})`);
  return queryString({
    cursor: cursor !== undefined && cursor > 0 ? cursor : undefined,
    order: query.order,
    count,
    address,
    tokenTag: nonEmpty(query.tokenTag),
    action: nonEmpty(query.action),
    withoutAction: nonEmpty(query.withoutAction),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
