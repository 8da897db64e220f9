/**
 * Database errors translated where they leave `src/db`: what the driver throws (Drizzle's
 * "Failed query" error, whose message holds the whole statement and every parameter, around
 * pg's or PGlite's error) becomes a {@link DatabaseError} whose message is one line of words
 * and codes. Everything above `src/db` sees only that. Failures are classified here (with
 * `sqlstate.ts`, a SQLSTATE in words) by SQLSTATE or network code, never by message text.
 */
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { DatabaseError, LedgerIndexerError } from '../errors.js';

import type { Db } from './drizzle-db.js';
import { describeSqlState } from './sqlstate.js';

/**
 * `error` as a {@link DatabaseError} when the database or the connection to it failed, naming
 * `operation` when given (and none is named yet); any other error is returned as it is (the
 * project's own errors, and bugs in code that merely ran inside a transaction).
 *
 * `fromDriver` says the error certainly came from the driver (it failed to connect, or to begin
 * a transaction): then an error without any code still counts as the connection failing.
 */
export function toDatabaseError(
  error: unknown,
  options: { operation?: string | undefined; fromDriver?: boolean } = {},
): unknown {
  if (error instanceof DatabaseError) {
    return options.operation === undefined ? error : error.during(options.operation);
  }
  if (error instanceof LedgerIndexerError) return error;
  // The pool already said what failed (it could not connect): Drizzle only wrapped it.
  if (error instanceof DrizzleQueryError && error.cause instanceof DatabaseError) {
    return toDatabaseError(error.cause, options);
  }
  const coded = classifyDatabaseFailure(error, options.operation);
  if (coded) return coded;
  if (options.fromDriver || error instanceof DrizzleQueryError) {
    // pg raises plain `Error`s without a code only about the connection ("Connection terminated
    // unexpectedly", a connect timeout, a client no longer queryable); other types are bugs.
    const inner = error instanceof DrizzleQueryError ? error.cause : error;
    const plain = inner instanceof Error && inner.constructor === Error;
    return new DatabaseError({
      kind: plain ? 'connection' : 'other',
      words: plain
        ? 'connection lost'
        : `unexpected ${inner instanceof Error ? inner.name : 'failure'} in the database driver`,
      operation: options.operation,
      cause: error,
    });
  }
  return error;
}

/** Runs `fn`, translating what it throws with {@link toDatabaseError} under `operation`'s name. */
export async function databaseOperation<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toDatabaseError(error, { operation });
  }
}

/**
 * `target` with each method named in `operations` run through {@link databaseOperation} under
 * the given name: a store's methods become the named operations its errors report.
 */
export function nameOperations<T extends object>(target: T, operations: { [K in keyof T]?: string }): T {
  const named = { ...target };
  for (const key of Object.keys(operations) as Array<keyof T>) {
    const method = target[key];
    const operation = operations[key];
    if (typeof method !== 'function' || operation === undefined) continue;
    named[key] = ((...args: unknown[]) =>
      databaseOperation(operation, () => method.apply(target, args))) as T[keyof T];
  }
  return named;
}

/**
 * A Drizzle database whose `execute` and `transaction` throw {@link DatabaseError}s: every query
 * of `src/db` goes through one of them (or through `queryRowsPrepared`, which translates too).
 */
export function translateDbErrors(db: Db): Db {
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'execute') {
        return async (query: Parameters<Db['execute']>[0]) => {
          try {
            return await target.execute(query);
          } catch (error) {
            throw toDatabaseError(error);
          }
        };
      }
      if (property === 'transaction') {
        return async (...args: Parameters<Db['transaction']>) => {
          const [body, config] = args;
          let entered = false;
          try {
            return await target.transaction((tx) => {
              entered = true;
              return body(tx);
            }, config);
          } catch (error) {
            // Before the body ran, only connecting or BEGIN can have failed.
            throw toDatabaseError(error, { fromDriver: !entered });
          }
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

/** Network error codes of a connection that never opened. */
const CANNOT_CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** Network error codes of a connection that broke (also told by `syscall`/`errno` fields). */
const CONNECTION_LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);

/**
 * A database error from what the driver threw, looking through wrappers (Drizzle's "Failed
 * query" error holds the driver's in `cause`): a SQLSTATE decides by its code and class, a
 * network error code means the connection failed. `undefined` when neither is found.
 */
export function classifyDatabaseFailure(error: unknown, operation?: string): DatabaseError | undefined {
  const found = findFailureCode(error);
  if (found === undefined) return undefined;
  if (found.sqlstate !== undefined) {
    const meaning = describeSqlState(found.sqlstate);
    return new DatabaseError({
      ...meaning,
      sqlstate: found.sqlstate,
      operation,
      constraint: meaning.kind === 'integrity' ? found.constraint : undefined,
      cause: error,
    });
  }
  const cannotConnect = CANNOT_CONNECT_CODES.has(found.networkCode);
  return new DatabaseError({
    kind: 'connection',
    words: cannotConnect ? 'cannot connect' : 'connection lost',
    networkCode: found.networkCode,
    operation,
    cause: error,
  });
}

type FailureCode =
  | { sqlstate: string; constraint: string | undefined; networkCode?: undefined }
  | { sqlstate?: undefined; networkCode: string };

/**
 * The first SQLSTATE or network error code along `error`'s cause chain (and the first error of
 * an `AggregateError`, as a connection to several addresses fails). A network error is told by
 * its `syscall`/`errno` fields or a known code, a SQLSTATE by its five-character `code`.
 */
function findFailureCode(error: unknown): FailureCode | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current && typeof current === 'object'; depth++) {
    const fields = current as { code?: unknown; syscall?: unknown; errno?: unknown; constraint?: unknown };
    if (typeof fields.code === 'string') {
      const network =
        typeof fields.syscall === 'string' ||
        typeof fields.errno === 'number' ||
        CANNOT_CONNECT_CODES.has(fields.code) ||
        CONNECTION_LOST_CODES.has(fields.code);
      if (network) return { networkCode: fields.code };
      if (/^[0-9A-Z]{5}$/.test(fields.code)) {
        return {
          sqlstate: fields.code,
          constraint: typeof fields.constraint === 'string' ? fields.constraint : undefined,
        };
      }
    }
    const inner: unknown =
      current instanceof AggregateError && current.errors.length > 0
        ? current.errors[0]
        : (current as { cause?: unknown }).cause;
    current = inner;
  }
  return undefined;
}
