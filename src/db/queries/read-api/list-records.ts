/** The read API's two list reads: by key (cursor, order, count) and by page number (10 a page). */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../rows.js';
import { filterSql, type RecordFilter } from './list-filter-sql.js';
import { RECORD_COLUMNS, type RecordRow } from './record-rows.js';

/** Records a page of the page dialect holds. */
export const PAGE_SIZE = 10;

/** Up to `count` records after (asc) or before (desc) rawId `cursor` (exclusive), and whether more follow. */
export async function selectKeyPage(
  db: Executor,
  filter: RecordFilter,
  query: { cursor: number | undefined; order: 'asc' | 'desc'; count: number },
): Promise<{ rows: RecordRow[]; hasNextPage: boolean }> {
  const asc = query.order === 'asc';
  const after =
    query.cursor === undefined
      ? sql`true`
      : asc
        ? sql`t.raw_id > ${query.cursor}`
        : sql`t.raw_id < ${query.cursor}`;
  const rows = await queryRows<RecordRow>(
    db,
    sql`SELECT ${RECORD_COLUMNS} FROM ledger_transactions t
        WHERE ${filterSql(filter)} AND ${after}
        ORDER BY t.raw_id ${sql.raw(asc ? 'ASC' : 'DESC')} LIMIT ${query.count + 1}::int`,
  );
  const hasNextPage = rows.length > query.count;
  return { rows: hasNextPage ? rows.slice(0, query.count) : rows, hasNextPage };
}

/** Page `page` (1-based) of the list, newest first, and how many pages it has. */
export async function selectPage(
  db: Executor,
  filter: RecordFilter,
  page: number,
): Promise<{ rows: RecordRow[]; totalPages: number }> {
  const where = filterSql(filter);
  const [counted] = await queryRows<{ n: string }>(
    db,
    sql`SELECT count(*)::text AS n FROM ledger_transactions t WHERE ${where}`,
  );
  const total = Number(counted?.n ?? 0);
  const offset = (page - 1) * PAGE_SIZE;
  // A page past the end reads nothing: no scan to a far offset.
  if (offset >= total) return { rows: [], totalPages: Math.ceil(total / PAGE_SIZE) };
  const rows = await queryRows<RecordRow>(
    db,
    sql`SELECT ${RECORD_COLUMNS} FROM ledger_transactions t WHERE ${where}
        ORDER BY t.raw_id DESC LIMIT ${PAGE_SIZE}::int OFFSET ${offset}::bigint`,
  );
  return { rows, totalPages: Math.ceil(total / PAGE_SIZE) };
}
