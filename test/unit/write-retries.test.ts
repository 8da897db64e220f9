import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RACE_ATTEMPTS, withRetries } from '../../src/db/write/write-retries.js';
import { DatabaseError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';

/** A logger keeping the level and message of each entry. */
function keptLogger(): { logger: Logger; entries: Array<{ level: string; msg: string }> } {
  const entries: Array<{ level: string; msg: string }> = [];
  const at =
    (level: string) =>
    (_fields: unknown, msg: string): void => {
      entries.push({ level, msg });
    };
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger: logger as unknown as Logger, entries };
}

const failure = (sqlstate: string): DatabaseError =>
  new DatabaseError({ kind: 'conflict', sqlstate, words: 'failed', operation: 'page-write' });

/** A write failing with each of `sqlstates` in turn, then answering `done`. */
function failingWith(...sqlstates: string[]): { write: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    write: async () => {
      const sqlstate = sqlstates[calls++];
      if (sqlstate !== undefined) throw failure(sqlstate);
      return 'done';
    },
    calls: () => calls,
  };
}

describe('withRetries', () => {
  it('repeats a write another writer raced (unique violation) without a warning', async () => {
    const { logger, entries } = keptLogger();
    const raced = failingWith('23505');
    assert.equal(await withRetries('page-write', raced.write, logger), 'done');
    assert.equal(raced.calls(), 2);
    assert.deepEqual(
      entries.map((e) => e.level),
      ['debug'],
    );
  });

  it('repeats a deadlock or a serialization failure with a warning', async () => {
    const { logger, entries } = keptLogger();
    const stuck = failingWith('40P01', '40001');
    assert.equal(await withRetries('page-write', stuck.write, logger), 'done');
    assert.equal(stuck.calls(), 3);
    assert.deepEqual(
      entries.map((e) => `${e.level} ${e.msg}`),
      ['warn database write retried', 'warn database write retried'],
    );
  });

  it('gives up after three attempts, eight after races, and at once on another failure', async () => {
    const stuckThrice = failingWith('40P01', '40001', '40P01');
    await assert.rejects(withRetries('page-write', stuckThrice.write, undefined), { sqlstate: '40P01' });
    assert.equal(stuckThrice.calls(), 3);
    const racedThrice = failingWith('23505', '23505', '23505');
    assert.equal(await withRetries('page-write', racedThrice.write, undefined), 'done');
    assert.equal(racedThrice.calls(), 4, 'a write that lost three races is written the fourth time');
    const racedAlways = failingWith(...Array.from({ length: RACE_ATTEMPTS }, () => '23505'));
    await assert.rejects(withRetries('page-write', racedAlways.write, undefined), { sqlstate: '23505' });
    assert.equal(racedAlways.calls(), RACE_ATTEMPTS);
    const broken = failingWith('42703');
    await assert.rejects(withRetries('page-write', broken.write, undefined), { sqlstate: '42703' });
    assert.equal(broken.calls(), 1);
  });
});
