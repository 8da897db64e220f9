/**
 * The columns of `ledger_transactions` and `ledger_bundle_items` as the writes see them, derived
 * from the Drizzle tables of `tables.ts`: a column added there is written everywhere without
 * another list to update, and a row type that misses it fails to compile.
 */
import { getTableColumns } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { ledgerBundleItems, ledgerTransactions } from './tables.js';

/** The SQL column names of a Drizzle table, as a union of literal types. */
type ColumnNames<T extends PgTable> = {
  [K in keyof T['$inferSelect']]: K extends keyof T
    ? T[K] extends PgColumn
      ? T[K]['_']['name']
      : never
    : never;
}[keyof T['$inferSelect']];

/** Set by the write itself (a count it keeps, the time of the commit), not taken from the record. */
const WRITE_SET_COLUMNS = ['status_changes', 'first_seen_at', 'updated_at'] as const;

/** A column of `ledger_transactions` whose value comes from the record. */
export type RecordColumn = Exclude<
  ColumnNames<typeof ledgerTransactions>,
  (typeof WRITE_SET_COLUMNS)[number]
>;

/** A column of `ledger_bundle_items`. */
export type BundleItemColumn = ColumnNames<typeof ledgerBundleItems>;

/** A column to write, with its SQL type (the cast from the text a value travels as). */
export interface WrittenColumn<Name extends string> {
  name: Name;
  sqlType: string;
}

function writtenColumns<Name extends string>(table: PgTable, skip: readonly string[]): WrittenColumn<Name>[] {
  return Object.values(getTableColumns(table))
    .filter((column) => !skip.includes(column.name))
    .map((column) => ({ name: column.name as Name, sqlType: column.getSQLType() }));
}

/** The record's columns of `ledger_transactions`, in the table's order. */
export const RECORD_COLUMNS: readonly WrittenColumn<RecordColumn>[] = writtenColumns(
  ledgerTransactions,
  WRITE_SET_COLUMNS,
);

/** The columns of `ledger_bundle_items`, in the table's order. */
export const BUNDLE_ITEM_COLUMNS: readonly WrittenColumn<BundleItemColumn>[] = writtenColumns(
  ledgerBundleItems,
  [],
);

/**
 * `true` when `A` and `B` are the same union of keys, else `never`: assigning `true` to it fails to
 * compile when a row type and its table disagree.
 */
export type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
