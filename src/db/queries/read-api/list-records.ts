/** The read API's two list reads: by key (cursor, order, count) and by page number (10 a page). */
import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../rows.js';
import { accountSides, filterSql, type RecordFilter } from './list-filter-sql.js';
import { RECORD_SELECT, type RecordRow } from './record-rows.js';

/** Records a page of the page dialect holds. */
export const PAGE_SIZE = 10;

/** Where a key page starts and how many it holds. */
export interface KeyWindow {
  cursor: number | undefined;
  order: 'asc' | 'desc';
  count: number;
}

/** The statement of {@link selectKeyPage}: one record more than asked, to tell whether more follow. */
export function keyPageSql(filter: RecordFilter, window: KeyWindow): SQL {
  const asc = window.order === 'asc';
  const after =
    window.cursor === undefined
      ? sql`true`
      : asc
        ? sql`t.raw_id > ${window.cursor}`
        : sql`t.raw_id < ${window.cursor}`;
  return recordsInOrder(filter, { after, order: window.order, limit: window.count + 1, offset: 0 });
}

/**
 * The records of `filter` past `after` in rawId order, `offset` of them skipped and `limit` kept.
 * An account's list is two walks in rawId order, each of one account index (the account, then
 * `raw_id`): its records as sender, then as receiver and not sender, each cut at what the answer
 * can hold, merged. One condition with OR would read every record of the account, by bitmaps,
 * and sort them: 25 ms for an account of 870 records among 1,000,000, where the walks take 0.5.
 */
function recordsInOrder(
  filter: RecordFilter,
  window: { after: SQL; order: 'asc' | 'desc'; limit: number; offset: number },
): SQL {
  const { after, limit, offset } = window;
  const order = sql.raw(window.order === 'asc' ? 'ASC' : 'DESC');
  const cut = offset === 0 ? sql`LIMIT ${limit}::int` : sql`LIMIT ${limit}::int OFFSET ${offset}::bigint`;
  if (filter.account === undefined) {
    return sql`SELECT ${RECORD_SELECT} FROM ledger_transactions t
      WHERE ${filterSql(filter)} AND ${after} ORDER BY t.raw_id ${order} ${cut}`;
  }
  const { sender, receiver } = accountSides(filter.account);
  const rest = filterSql({ ...filter, account: undefined });
  const walk = (side: SQL) => sql`(SELECT t.* FROM ledger_transactions t
      WHERE ${side} AND ${rest} AND ${after} ORDER BY t.raw_id ${order} LIMIT ${limit + offset}::int)`;
  return sql`SELECT ${RECORD_SELECT} FROM
      (${walk(sender)} UNION ALL ${walk(sql`${receiver} AND NOT ${sender}`)}) t
      ORDER BY t.raw_id ${order} ${cut}`;
}

/** Up to `count` records after (asc) or before (desc) rawId `cursor` (exclusive), and whether more follow. */
export async function selectKeyPage(
  db: Executor,
  filter: RecordFilter,
  window: KeyWindow,
): Promise<{ rows: RecordRow[]; hasNextPage: boolean }> {
  const rows = await queryRows<RecordRow>(db, keyPageSql(filter, window));
  const hasNextPage = rows.length > window.count;
  return { rows: hasNextPage ? rows.slice(0, window.count) : rows, hasNextPage };
}

/** The statements of {@link selectPage}: the list's length, and one page of it. */
export function pageSql(filter: RecordFilter, page: number): { count: SQL; rows: SQL } {
  const where = filterSql(filter);
  const offset = (page - 1) * PAGE_SIZE;
  return {
    count: sql`SELECT count(*)::text AS n FROM ledger_transactions t WHERE ${where}`,
    rows: recordsInOrder(filter, { after: sql`true`, order: 'desc', limit: PAGE_SIZE, offset }),
  };
}

/** Page `page` (1-based) of the list, newest first, and how many pages it has. */
export async function selectPage(
  db: Executor,
  filter: RecordFilter,
  page: number,
): Promise<{ rows: RecordRow[]; totalPages: number }> {
  const statements = pageSql(filter, page);
  const [counted] = await queryRows<{ n: string }>(db, statements.count);
  const total = Number(counted?.n ?? 0);
  const totalPages = Math.ceil(total / PAGE_SIZE);
  // A page past the end reads nothing: no scan to a far offset.
  if ((page - 1) * PAGE_SIZE >= total) return { rows: [], totalPages };
  return { rows: await queryRows<RecordRow>(db, statements.rows), totalPages };
}
