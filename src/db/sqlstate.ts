/**
 * SQLSTATE codes in words: what a PostgreSQL (or PGlite) error code means to someone running
 * ledger-indexer. Pure data; `classifyDatabaseFailure` (database-errors.ts) builds a
 * `DatabaseError`'s one-line message from it.
 * Codes: https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
import type { DatabaseFailureKind } from '../errors.js';

/** The words and kind of one SQLSTATE, as {@link describeSqlState} returns them. */
export interface SqlStateMeaning {
  kind: DatabaseFailureKind;
  words: string;
}

/** A unique index refused a row: for the writes, another writer stored the record meanwhile. */
export const UNIQUE_VIOLATION = '23505';

const SQLSTATE_CODES: Record<string, SqlStateMeaning> = {
  '25006': { kind: 'read-only', words: 'database is read-only' },
  '57P01': { kind: 'connection', words: 'connection lost: the server ended the session' },
  '57P02': { kind: 'connection', words: 'connection lost: the server crashed' },
  '57P03': { kind: 'connection', words: 'the server is starting up or shutting down' },
  '57P04': { kind: 'access', words: 'the database was dropped' },
  '57P05': { kind: 'connection', words: 'connection lost: idle session timeout' },
  '57014': { kind: 'other', words: 'statement canceled (statement timeout or cancel request)' },
  '53100': { kind: 'resources', words: 'disk full' },
  '53200': { kind: 'resources', words: 'out of memory' },
  '53300': { kind: 'resources', words: 'too many connections' },
  '40001': { kind: 'conflict', words: 'serialization failure' },
  '40P01': { kind: 'conflict', words: 'deadlock detected' },
  '55P03': { kind: 'conflict', words: 'lock not available' },
  '23505': { kind: 'integrity', words: 'unique constraint violated' },
  '23503': { kind: 'integrity', words: 'foreign key constraint violated' },
  '23502': { kind: 'integrity', words: 'not-null constraint violated' },
  '23514': { kind: 'integrity', words: 'check constraint violated' },
  '42501': { kind: 'access', words: 'permission denied' },
  '42P01': { kind: 'bug', words: 'undefined table (migrations not applied, or a bug)' },
  '3D000': { kind: 'access', words: 'database does not exist' },
};

const SQLSTATE_CLASSES: Record<string, SqlStateMeaning> = {
  '08': { kind: 'connection', words: 'connection lost' },
  '53': { kind: 'resources', words: 'insufficient resources' },
  '57': { kind: 'connection', words: 'operator intervention' },
  '58': { kind: 'resources', words: 'system error (disk or I/O)' },
  '40': { kind: 'conflict', words: 'transaction rolled back' },
  '23': { kind: 'integrity', words: 'integrity constraint violated' },
  '28': { kind: 'access', words: 'authentication failed' },
  '42': { kind: 'bug', words: 'SQL syntax error or undefined object (a bug)' },
  '22': { kind: 'bug', words: 'a value the database refuses (a bug)' },
  '25': { kind: 'bug', words: 'invalid transaction state (a bug)' },
  '0A': { kind: 'bug', words: 'feature not supported' },
  '54': { kind: 'bug', words: 'program limit exceeded' },
  '55': { kind: 'other', words: 'object not in prerequisite state' },
  P0: { kind: 'other', words: 'raised by a database function or trigger' },
  XX: { kind: 'other', words: 'internal error of the database' },
};

/** Words for a SQLSTATE: its exact code when known, else its class (first two characters). */
export function describeSqlState(code: string): SqlStateMeaning {
  return (
    SQLSTATE_CODES[code] ??
    SQLSTATE_CLASSES[code.slice(0, 2)] ?? { kind: 'other', words: 'the database refused the statement' }
  );
}
