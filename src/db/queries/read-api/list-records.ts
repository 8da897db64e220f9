/** The read API's two list reads: by key (cursor, order, count) and by page number (10 a page). */
import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../rows.js';
import { filterSql, type RecordFilter } from './list-filter-sql.js';
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
  return sql`SELECT ${RECORD_SELECT} FROM ledger_transactions t
      WHERE ${filterSql(filter)} AND ${after}
      ORDER BY t.raw_id ${sql.raw(asc ? 'ASC' : 'DESC')} LIMIT ${window.count + 1}::int`;
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
    rows: sql`SELECT ${RECORD_SELECT} FROM ledger_transactions t WHERE ${where}
        ORDER BY t.raw_id DESC LIMIT ${PAGE_SIZE}::int OFFSET ${offset}::bigint`,
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
