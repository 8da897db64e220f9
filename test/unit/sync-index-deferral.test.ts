import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deferIndexes } from '../../src/queue/backfill-flow.js';
import { type DeferredIndexes, indexesPayToDefer } from '../../src/sync/ports/read-indexes.js';

describe('whether a first backfill builds its indexes at its end', () => {
  it('does without a request budget, or with one the writes cannot keep up with', () => {
    assert.equal(indexesPayToDefer(0, 100), true);
    assert.equal(indexesPayToDefer(undefined, 100), true);
    assert.equal(indexesPayToDefer(201, 100), true);
    assert.equal(indexesPayToDefer(2_001, 10), true);
  });

  it('keeps them up under a budget that bounds the walk: up to 200 requests a second by key, 2,000 by page number', () => {
    assert.equal(indexesPayToDefer(50, 100), false);
    assert.equal(indexesPayToDefer(100, 100), false);
    assert.equal(indexesPayToDefer(200, 100), false);
    assert.equal(indexesPayToDefer(400, 10), false);
    assert.equal(indexesPayToDefer(2_000, 10), false);
  });

  it('is the rule of the workers too, by the dialect of the backfill', async () => {
    let deferred = 0;
    const indexes: DeferredIndexes = {
      defer: async () => {
        deferred++;
        return [];
      },
      restore: async () => [],
      pending: async () => [],
    };
    const deps = (requestsPerSecond: number | undefined) => ({
      indexes,
      requestsPerSecond,
      keyCount: () => 100,
    });
    await deferIndexes(deps(100), 'key');
    await deferIndexes(deps(1_000), 'page');
    assert.equal(deferred, 0, 'budgets that bound the backfill');
    await deferIndexes(deps(undefined), 'key');
    await deferIndexes(deps(0), 'page');
    await deferIndexes(deps(500), 'key');
    assert.equal(deferred, 3);
  });
});
