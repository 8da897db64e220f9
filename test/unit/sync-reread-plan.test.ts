import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BURN_LIST, planRereads, type RereadCandidate } from '../../src/sync/reread-plan.js';

const at = (rawId: number, listRank: number | null, burnRank: number | null = null): RereadCandidate => ({
  rawId,
  listRank,
  burnRank,
});

describe('planRereads', () => {
  it('plans nothing when nothing is due', () => {
    assert.deepEqual(planRereads([]), { reads: [], lookups: [], requests: 0 });
    assert.deepEqual(planRereads([], { globalPagesRead: 4 }), { reads: [], lookups: [], requests: 0 });
  });

  it('reads the dense head of the global list down to its deepest record, ten records a page', () => {
    const due = Array.from({ length: 40 }, (_, i) => at(1000 - i, 5 + i));
    const plan = planRereads(due);
    assert.deepEqual(plan.reads, [{ list: 'global', spec: {}, fromPage: 1, toPage: 5 }]);
    assert.deepEqual(plan.lookups, []);
    assert.equal(plan.requests, 5);
  });

  it('counts the pages the tail walk already read, reading only those below', () => {
    const due = [at(501, 25), ...Array.from({ length: 12 }, (_, i) => at(500 - i, 30 + i * 2))];
    const plan = planRereads(due, { globalPagesRead: 3 });
    // The record at rank 25 (page 3) was not on the pages read: the list moved; it is just below.
    assert.deepEqual(plan.reads, [{ list: 'global', spec: {}, fromPage: 4, toPage: 6 }]);
    assert.equal(plan.requests, 3);
  });

  it('looks up stragglers far down one by one rather than reading every page above them', () => {
    const due = [at(10, 40_000 / 10), at(9, null), at(8, 3000)];
    const plan = planRereads(due);
    assert.deepEqual(plan.reads, []);
    assert.deepEqual(
      plan.lookups.map((r) => r.rawId),
      [10, 9, 8],
    );
    assert.equal(plan.requests, 3);
  });

  it('mixes: pages for the head, look-ups for the few far below it', () => {
    const head = Array.from({ length: 25 }, (_, i) => at(900 - i, i * 2));
    const far = [at(100, 420), at(90, null)];
    const plan = planRereads([...head, ...far]);
    assert.deepEqual(plan.reads, [{ list: 'global', spec: {}, fromPage: 1, toPage: 5 }]);
    assert.deepEqual(
      plan.lookups.map((r) => r.rawId),
      [100, 90],
    );
    assert.equal(plan.requests, 7);
  });

  it('reads burns waiting for their target hash from the burn list, where they are dense', () => {
    // Twenty burns spread over the first 150 records of the global list, the first 20 of the burn list.
    const burns = Array.from({ length: 20 }, (_, i) => at(800 - i * 7, i * 7 + 10, i));
    const plan = planRereads(burns, { globalPagesRead: 2 });
    assert.deepEqual(plan.reads, [{ list: 'burns', spec: BURN_LIST, fromPage: 1, toPage: 2 }]);
    assert.deepEqual(plan.lookups, []);
    assert.equal(plan.requests, 2);
  });

  it('never reads deeper than the page limit', () => {
    const due = Array.from({ length: 30 }, (_, i) => at(5000 - i, 100 + i * 10));
    const plan = planRereads(due, { maxPages: 20 });
    assert.ok(plan.reads.every((r) => r.toPage <= 20));
    assert.equal(
      plan.requests,
      plan.reads.reduce((n, r) => n + r.toPage - r.fromPage + 1, 0) + plan.lookups.length,
    );
  });
});
