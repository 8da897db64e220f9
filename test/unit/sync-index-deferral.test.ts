import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { indexesPayToDefer } from '../../src/app/sync-once.js';

describe('whether a first backfill builds its indexes at its end', () => {
  it('does without a request budget, or with one the writes cannot keep up with', () => {
    assert.equal(indexesPayToDefer(0, 100), true);
    assert.equal(indexesPayToDefer(undefined, 100), true);
    assert.equal(indexesPayToDefer(200, 100), true);
  });

  it('keeps them up under a budget that bounds the walk: 50 requests a second by key, any budget by page number', () => {
    assert.equal(indexesPayToDefer(50, 100), false);
    assert.equal(indexesPayToDefer(400, 10), false);
  });
});
