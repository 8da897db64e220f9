import { createHash } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { toDatabaseError } from './database-errors.js';
import type { Db } from './drizzle-db.js';

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

interface PreparingSession {
  dialect: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } };
  prepareQuery(
    query: { sql: string; params: unknown[] },
    fields: undefined,
    name: string,
    arrayMode: boolean,
  ): { execute(): Promise<unknown> };
}

const statementNames = new Map<string, string>();

/**
 * Runs a query as a named prepared statement: PostgreSQL parses and plans its text once per
 * connection instead of on every call, which is most of the cost of a big statement over few
 * rows. The name is derived from the text, so a changed text never reuses an old plan. Falls
 * back to a plain execution where the driver session offers no named statements.
 */
export async function queryRowsPrepared<T>(executor: Executor, query: SQL): Promise<T[]> {
  const session = (executor as { _?: { session?: Partial<PreparingSession> } })._?.session;
  if (!session?.prepareQuery || !session.dialect) return queryRows<T>(executor, query);
  const compiled = session.dialect.sqlToQuery(query);
  let name = statementNames.get(compiled.sql);
  if (name === undefined) {
    name = `ledger_indexer_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 16)}`;
    statementNames.set(compiled.sql, name);
  }
  // The driver session is used directly here, past the translation of `openDatabase`'s db.
  const result = (await session
    .prepareQuery(compiled, undefined, name, false)
    .execute()
    .catch((error: unknown) => {
      throw toDatabaseError(error);
    })) as { rows?: T[] };
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
