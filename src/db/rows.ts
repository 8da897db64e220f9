import type { SQL } from 'drizzle-orm';
import type { Db } from './connect.js';

/** Anything that runs SQL: the database or a transaction of it. */
export interface Executor {
  execute: Db['execute'];
}

/**
 * Runs a query and returns its rows. Both drivers answer with an object holding `rows`; values
 * arrive with driver-specific types, so queries cast what they return to text/int/json where
 * it matters.
 */
export async function queryRows<T>(executor: Executor, query: SQL): Promise<T[]> {
  const result = (await executor.execute(query)) as unknown as { rows?: T[] };
  return result.rows ?? [];
}

/** Like {@link queryRows}, for a query answering exactly one row. */
export async function queryOne<T>(executor: Executor, query: SQL): Promise<T> {
  const [row] = await queryRows<T>(executor, query);
  if (row === undefined) throw new Error('query answered no row');
  return row;
}

/** A timestamp value as the drivers return it (Date, or text), as a Date; null stays null. */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(String(value));
}

/** A bigint/integer value (number, bigint or text) as a number; null stays null. */
export function toNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return Number(value);
}
