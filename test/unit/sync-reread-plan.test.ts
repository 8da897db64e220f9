import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BURN_LIST,
  listShift,
  placeOnPages,
  planRereads,
  type RereadCandidate,
} from '../../src/sync/reread/reread-plan.js';

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

  it('skips the pages between the due records: their records were read recently', () => {
    // A cohort read three runs ago now at ranks 62..79, and two burns far below.
    const cohort = Array.from({ length: 18 }, (_, i) => at(2000 - i, 62 + i));
    const plan = planRereads(cohort, { globalPagesRead: 2 });
    assert.deepEqual(plan.reads, [{ list: 'global', spec: {}, fromPage: 7, toPage: 8 }]);
    assert.equal(plan.requests, 2);
  });

  it('covers both lists greedily: the burn list where burns are denser, global pages for the rest', () => {
    const cohort = Array.from({ length: 10 }, (_, i) => at(3000 - i, 70 + i));
    // Burns spread one per global page (ranks 150, 160, ...), four to a burn-list page.
    const burns = Array.from({ length: 8 }, (_, i) => at(2900 - i * 10, 150 + i * 10, 12 + i));
    const plan = planRereads([...cohort, ...burns], { globalPagesRead: 2 });
    assert.deepEqual(plan.reads, [
      { list: 'global', spec: {}, fromPage: 8, toPage: 8 },
      { list: 'burns', spec: BURN_LIST, fromPage: 2, toPage: 2 },
    ]);
    assert.deepEqual(plan.lookups, []);
  });

  it('reads a page for one record next to the pages read, and looks one up far below them', () => {
    const cohort = [...Array.from({ length: 9 }, (_, i) => at(1000 - i, 61 + i)), at(990, 70)];
    const plan = planRereads([...cohort, at(500, 300)], { globalPagesRead: 2 });
    assert.deepEqual(plan.reads, [{ list: 'global', spec: {}, fromPage: 7, toPage: 8 }]);
    assert.deepEqual(
      plan.lookups.map((r) => r.rawId),
      [500],
    );
  });
});

describe('listShift', () => {
  it('reads how far arrivals moved the list from where a page shows the due records', () => {
    // Page 7 (ranks 60..69) now starts with rawId 102: two records arrived since ranks were counted.
    const rawIds = Array.from({ length: 10 }, (_, i) => 102 - i);
    const expected = [
      { rawId: 100, rank: 60 },
      { rawId: 95, rank: 65 },
    ];
    assert.equal(listShift({ page: 7, rawIds }, expected), 2);
  });

  it('bounds the shift when the page shows none of them', () => {
    const rawIds = Array.from({ length: 10 }, (_, i) => 120 - i);
    // rawId 100 was expected at rank 68 on page 7, but the page ends at 111: now at rank 70 or below.
    assert.equal(listShift({ page: 7, rawIds }, [{ rawId: 100, rank: 68 }]), 2);
    assert.equal(listShift({ page: 7, rawIds: [] }, [{ rawId: 100, rank: 68 }]), null);
    assert.equal(listShift({ page: 7, rawIds }, []), null);
  });

  it('places the records again by the shift, not on pages read already', () => {
    const records = [at(100, 58), at(99, 59), at(98, 60)];
    const plan = placeOnPages(records, {
      globalPagesRead: 2,
      maxPages: 50,
      shifts: { global: 2, burns: 0 },
      skip: (list, page) => list === 'global' && page === 6,
    });
    assert.deepEqual(plan.reads, [{ list: 'global', spec: {}, fromPage: 7, toPage: 7 }]);
    assert.deepEqual(plan.lookups, []);
  });
});
