/**
 * The table's side of `verify` by key: a rawId span of a stream's list, the records the table
 * holds in it, compared with what the service listed there.
 */

import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows, toNumber } from '../rows.js';
import { IMMUTABLE_COLUMNS, type ImmutableColumn } from '../schema/immutable-columns.js';
import { textArray } from '../text-array.js';
import { isGlobal, type ListStream, listConditions, seenBy } from './list-counts.js';

/** The span `(above, atOrBelow]` (`above` null: no lower bound) as a condition on `column`. */
function inSpan(column: SQL, span: { above: number | null; atOrBelow: number }): SQL {
  return span.above === null
    ? sql`${column} <= ${span.atOrBelow}`
    : sql`${column} > ${span.above} and ${column} <= ${span.atOrBelow}`;
}

/**
 * Records of the stream's list the table holds in the span (stored transactions the list holds,
 * and records set aside as rejected and not stored: every one for the global list, the stream's
 * own for another) that are not among `listed`: how many, and the first `nameAtMost` by rawId.
 */
export async function selectUnlistedInSpan(
  db: Executor,
  input: {
    stream: ListStream;
    above: number | null;
    atOrBelow: number;
    listed: readonly number[];
    nameAtMost: number;
  },
): Promise<{ count: number; rawIds: number[] }> {
  const listed = sql`${textArray(input.listed.map(String))}::bigint[]`;
  const global = isGlobal(input.stream);
  const transactions = global ? sql`true` : listConditions(input.stream);
  const rejected = global ? sql`true` : seenBy(input.stream.key);
  const rows = await queryRows<{ raw_id: unknown; n: unknown }>(
    db,
    sql`with held as (
          select t.raw_id from ledger_transactions t
          where ${inSpan(sql`t.raw_id`, input)} and ${transactions}
          union
          select r.raw_id from rejected_records r
          where ${inSpan(sql`r.raw_id`, input)} and ${rejected}
            and not exists (select 1 from ledger_transactions t where t.raw_id = r.raw_id)
        )
        select raw_id, count(*) over () as n from held
        where raw_id <> all(${listed})
        order by raw_id limit ${input.nameAtMost}`,
  );
  const count = toNumber(rows[0]?.n) ?? 0;
  return { count, rawIds: rows.map((row) => toNumber(row.raw_id) ?? -1) };
}

/** The immutable columns of the stored transactions among `rawIds`, as text. */
export async function selectImmutableColumns(
  db: Executor,
  rawIds: readonly number[],
): Promise<Map<number, Record<ImmutableColumn, string>>> {
  const stored = new Map<number, Record<ImmutableColumn, string>>();
  if (rawIds.length === 0) return stored;
  const columns = sql.raw(IMMUTABLE_COLUMNS.map((c) => `t.${c}::text as ${c}`).join(', '));
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`select t.raw_id, ${columns} from ledger_transactions t
        where t.raw_id = any(${textArray(rawIds.map(String))}::bigint[])`,
  );
  for (const row of rows) {
    const values = Object.fromEntries(IMMUTABLE_COLUMNS.map((c) => [c, String(row[c] ?? '')]));
    stored.set(toNumber(row.raw_id) ?? -1, values as Record<ImmutableColumn, string>);
  }
  return stored;
}
