import type { TxsAfterQuery } from './ledger-client.js';
import { queryString } from './paths.js';
import type { TxListQuery } from './types.js';

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

/** The key paging query string (ascending after `cursor`); `cursor` >= 0 and `count` >= 1 (default 100). */
export function keyPageQuery(query: TxsAfterQuery): string {
  if (!Number.isSafeInteger(query.cursor) || query.cursor < 0) {
    throw new TypeError(`cursor must be a non-negative whole number (got ${query.cursor})`);
  }
  const count = query.count ?? 100;
  if (!Number.isSafeInteger(count) || count < 1) throw new TypeError(`count must be >= 1 (got ${count})`);
  return queryString({
    cursor: query.cursor,
    order: 'asc',
    count,
    tokenTag: nonEmpty(query.tokenTag),
    action: nonEmpty(query.action),
    withoutAction: nonEmpty(query.withoutAction),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
