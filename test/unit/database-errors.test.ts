import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import pg from 'pg';
import { failureLine } from '../../src/cli/run-outcome.js';
import { toDatabaseError } from '../../src/db/database-errors.js';
import { describeSqlState } from '../../src/db/sqlstate.js';
import { DatabaseError, LeaseLostError } from '../../src/errors.js';
import { serializeError } from '../../src/logger.js';

/** A statement and parameters as a page write sends them: record values the output must never show. */
const STATEMENT = 'INSERT INTO ledger_transactions (raw_id, amount, ledger_hash) VALUES ($1, $2, $3)';
const PARAMS = ['17', '123456789012345678901234567890', `0x${'ab'.repeat(32)}`];

/** What pg raises for an error answer of the server, wrapped as Drizzle wraps every failed query. */
function failedQuery(code: string, fields: Partial<pg.DatabaseError> = {}): DrizzleQueryError {
  const driver = Object.assign(new pg.DatabaseError(`server says ${PARAMS[1]}`, 100, 'error'), {
    code,
    ...fields,
  });
  return new DrizzleQueryError(STATEMENT, PARAMS, driver);
}

function assertNoStatement(text: string): void {
  assert.doesNotMatch(text, /INSERT INTO|Failed query|params/);
  for (const value of PARAMS.slice(1)) assert.ok(!text.includes(value), `'${value}' leaked into: ${text}`);
}

describe('describeSqlState', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['25006', 'read-only', /^database is read-only$/],
    ['08006', 'connection', /^connection lost$/],
    ['08001', 'connection', /^connection lost$/],
    ['57P01', 'connection', /^connection lost: the server ended the session$/],
    ['57P02', 'connection', /crashed/],
    ['53100', 'resources', /^disk full$/],
    ['53400', 'resources', /^insufficient resources$/],
    ['40001', 'conflict', /^serialization failure$/],
    ['40P01', 'conflict', /^deadlock detected$/],
    ['23505', 'integrity', /unique/],
    ['23P01', 'integrity', /^integrity constraint violated$/],
    ['42601', 'bug', /a bug/],
    ['42P01', 'bug', /undefined table/],
    ['42501', 'access', /^permission denied$/],
    ['28P01', 'access', /^authentication failed$/],
    ['3D000', 'access', /^database does not exist$/],
    ['ZZ999', 'other', /refused/],
  ];
  for (const [code, kind, words] of cases) {
    it(`says ${code} is ${kind}`, () => {
      const meaning = describeSqlState(code);
      assert.equal(meaning.kind, kind);
      assert.match(meaning.words, words);
    });
  }
});

describe('toDatabaseError', () => {
  it('turns a failed query into one line of words and codes, the operation named', () => {
    const error = toDatabaseError(failedQuery('25006'), { operation: 'migrate' });
    assert.ok(error instanceof DatabaseError);
    assert.equal(error.message, 'database is read-only (SQLSTATE 25006 in migrate)');
    assert.equal(error.sqlstate, '25006');
    assert.equal(error.kind, 'read-only');
    assert.equal(error.operation, 'migrate');
    assert.equal(error.retryable, true);
    assert.ok(error.cause instanceof DrizzleQueryError, 'the driver error is kept as the cause');
  });

  it('keeps the first operation named and adds one where none was', () => {
    const inner = toDatabaseError(failedQuery('40P01'));
    assert.ok(inner instanceof DatabaseError);
    assert.equal(inner.operation, undefined);
    const named = toDatabaseError(inner, { operation: 'page-write' });
    assert.ok(named instanceof DatabaseError);
    assert.equal(named.message, 'deadlock detected (SQLSTATE 40P01 in page-write)');
    assert.equal(toDatabaseError(named, { operation: 'outer' }), named);
  });

  it('names the constraint of an integrity violation, never the values', () => {
    const error = toDatabaseError(
      failedQuery('23505', {
        constraint: 'ledger_transactions_ledger_hash_unique',
        detail: `Key=(${PARAMS[2]})`,
      }),
    );
    assert.ok(error instanceof DatabaseError);
    assert.equal(error.retryable, false);
    assert.match(error.message, /constraint ledger_transactions_ledger_hash_unique/);
    assertNoStatement(error.message);
  });

  it('says a bug for a syntax error: not worth retrying', () => {
    const error = toDatabaseError(failedQuery('42601'));
    assert.ok(error instanceof DatabaseError);
    assert.equal(error.kind, 'bug');
    assert.equal(error.retryable, false);
  });

  it('tells a connection never made from one lost, by the network code', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
    });
    const never = toDatabaseError(new DrizzleQueryError(STATEMENT, PARAMS, refused));
    assert.ok(never instanceof DatabaseError);
    assert.equal(never.message, 'cannot connect (ECONNREFUSED)');
    assert.equal(never.kind, 'connection');
    const reset = Object.assign(new Error('read ECONNRESET'), {
      code: 'ECONNRESET',
      errno: -104,
      syscall: 'read',
    });
    const lost = toDatabaseError(reset, { fromDriver: true });
    assert.ok(lost instanceof DatabaseError);
    assert.equal(lost.message, 'connection lost (ECONNRESET)');
  });

  it("counts the driver's plain errors without a code as the connection lost", () => {
    const cut = new DrizzleQueryError(STATEMENT, PARAMS, new Error('Connection terminated unexpectedly'));
    const error = toDatabaseError(cut, { operation: 'page-write' });
    assert.ok(error instanceof DatabaseError);
    assert.equal(error.message, 'connection lost (in page-write)');
    assert.equal(error.retryable, true);
    const connecting = toDatabaseError(new Error('timeout exceeded when trying to connect'), {
      fromDriver: true,
    });
    assert.ok(connecting instanceof DatabaseError && connecting.kind === 'connection');
  });

  it("leaves the project's own errors and errors of other code as they are", () => {
    const lease = new LeaseLostError('txs', 'held by w1');
    assert.equal(toDatabaseError(lease, { operation: 'page-write' }), lease);
    const bug = new TypeError('x is undefined');
    assert.equal(toDatabaseError(bug), bug);
  });
});

describe('a database failure in logs and on the command line', () => {
  it('logs the SQLSTATE and the operation, not the statement or its parameters', () => {
    const error = toDatabaseError(failedQuery('57P01'), { operation: 'page-write' });
    const logged = serializeError(error) as Record<string, unknown>;
    assert.equal(logged['sqlstate'], '57P01');
    assert.equal(logged['operation'], 'page-write');
    assert.equal(logged['kind'], 'connection');
    assertNoStatement(JSON.stringify(logged));
  });

  it('logs a failed query, or an error caused by one, without the statement', () => {
    assertNoStatement(JSON.stringify(serializeError(failedQuery('25006'))));
    const wrapper = new Error('job failed', { cause: failedQuery('25006') });
    assertNoStatement(JSON.stringify(serializeError(wrapper)));
    const dbWrapper = new Error('job failed', { cause: toDatabaseError(failedQuery('25006')) });
    assert.match(JSON.stringify(serializeError(dbWrapper)), /"sqlstate":"25006"/);
  });

  it('prints one line naming the failure, and for a sync that checkpoints are kept only where true', () => {
    const readOnly = toDatabaseError(failedQuery('25006'), { operation: 'page-write' });
    assert.equal(
      failureLine(readOnly, { resumes: true }),
      'the database failed: database is read-only (SQLSTATE 25006 in page-write); checkpoints kept, the next run resumes',
    );
    assert.equal(
      failureLine(readOnly),
      'the database failed: database is read-only (SQLSTATE 25006 in page-write)',
      'a command that syncs nothing says nothing of checkpoints',
    );
    const denied = toDatabaseError(failedQuery('42501'), { operation: 'page-write' });
    assert.ok(denied instanceof DatabaseError && !denied.retryable, 'permission denied is permanent');
    assert.match(
      failureLine(denied, { resumes: true }),
      /; checkpoints kept; the next run fails the same way until this is fixed$/,
    );
    const untranslated = failureLine(failedQuery('25006'));
    assert.match(untranslated, /^the database failed: database is read-only \(SQLSTATE 25006\)/);
    assertNoStatement(untranslated);
  });
});
