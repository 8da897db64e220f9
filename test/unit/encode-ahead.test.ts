import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeTransaction } from '../../src/db/write/encode.js';
import { createEncodeAhead } from '../../src/db/write/encode-ahead.js';
import { prepareBatch } from '../../src/db/write/prepare-batch.js';
import { InvalidRecordError } from '../../src/errors.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

describe('records encoded ahead of their commit', () => {
  const at = new Date('2026-01-01T00:00:00Z');

  it('hands a commit the encoding made when the record was read, once', () => {
    let calls = 0;
    const ahead = createEncodeAhead(() => {
      calls++;
      return { now: at, burnWindowMs: 1000 };
    });
    const tx = makeLedgerTx({ rawId: 7 });
    ahead.ahead([tx]);
    assert.equal(calls, 1);
    const first = ahead.encode(tx);
    assert.deepEqual(first, encodeTransaction(tx, { now: at, burnWindowMs: 1000 }));
    assert.equal(calls, 1, 'taken from the cache, not encoded again');
    const second = ahead.encode(tx);
    assert.equal(calls, 2, 'taken once: a second commit encodes again');
    assert.notEqual(first, second);
    assert.deepEqual(first, second);
  });

  it("keeps a record's encoding error for its commit, which sets the record aside with the same reason", () => {
    const ahead = createEncodeAhead(() => ({ now: at }));
    const bad = makeLedgerTx({ rawId: 8, amount: '12.5' });
    const good = makeLedgerTx({ rawId: 9 });
    ahead.ahead([bad, good]);
    assert.throws(() => ahead.encode(bad), InvalidRecordError);
    ahead.ahead([bad]);
    const withAhead = prepareBatch([bad, good], { now: at, burnWindowMs: 0, encode: ahead.encode });
    const without = prepareBatch([bad, good], { now: at, burnWindowMs: 0 });
    assert.deepEqual(withAhead, without);
    assert.equal(withAhead.rejected.length, 1);
    assert.match(withAhead.rejected[0]!.reason, /amount is not a decimal digit string/);
  });
});
