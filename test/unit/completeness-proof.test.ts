import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findGaps, mergeRanges } from '../../src/domain/raw-id-ranges.js';
import {
  findRawIdHoles,
  judgeCompleteness,
  type ObservedPage,
  provenByRun,
  repairStartPage,
  splitPages,
} from '../../src/verify/completeness.js';

/** A live newest-first list: `ids` ascending; pages are cut from the newest end. */
function pageOf(ids: number[], page: number, size = 10): ObservedPage {
  const newestFirst = [...ids].reverse();
  return {
    page,
    rawIds: newestFirst.slice((page - 1) * size, page * size),
    totalPages: Math.max(1, Math.ceil(ids.length / size)),
  };
}

const range = (lo: number, hi: number): number[] => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

describe('completeness proof', () => {
  it('a walk over every page in order proves the whole history down to the bottom', () => {
    const ids = range(1, 35);
    const proven = provenByRun([1, 2, 3, 4].map((p) => pageOf(ids, p)));
    assert.deepEqual(proven, [{ lo: 0, hi: 35 }]);
    const report = judgeCompleteness(proven, 35);
    assert.equal(report.complete, true);
    assert.equal(report.watermark, 35);
  });

  it('a resumed walk joins to the page its earlier attempt saved, without claiming that page', () => {
    // rawIds with holes: 50, 48, 46 … 2. The earlier attempt saved page 2's lowest rawId (12) as
    // its progress; the commit that stored page 2 may have been lost, so 12 is not claimed.
    const ids = range(1, 25).map((i) => i * 2);
    const anchor: ObservedPage = { page: 2, rawIds: [12], totalPages: Number.MAX_SAFE_INTEGER, anchor: true };
    const resumed = provenByRun([anchor, pageOf(ids, 3)]); // 10..2, the last page
    assert.deepEqual(resumed, [{ lo: 0, hi: 11 }]);
    // When the earlier commit held, its own span (page 2: 30..12) meets the join.
    const earlier = provenByRun([pageOf(ids, 1), pageOf(ids, 2)]);
    assert.equal(judgeCompleteness([...earlier, ...resumed], 50).complete, true);
    // Joins between pages of one walk stop short of the older page's oldest record too; merged,
    // the walk proves what it did before.
    assert.deepEqual(provenByRun([pageOf(ids, 1), pageOf(ids, 2), pageOf(ids, 3)]), [{ lo: 0, hi: 50 }]);
  });

  it('pages fetched out of order while records arrive leave a gap exactly where records were skipped', () => {
    let ids = range(1, 40);
    const page3First = pageOf(ids, 3); // rawIds 20..11
    ids = [...ids, 41, 42, 43]; // three arrivals push everything three places down
    const runA = provenByRun([pageOf(ids, 1), pageOf(ids, 2)]); // 43..24
    const runB = provenByRun([page3First, pageOf(ids, 4), pageOf(ids, 5)]); // 20..1 (page 5 ends the list)
    const report = judgeCompleteness([...runA, ...runB], 43);
    assert.equal(report.complete, false);
    assert.deepEqual(report.gaps, [{ lo: 21, hi: 23 }]);
    assert.equal(report.watermark, 20);
  });

  it('a repair walk across the gap closes it and moves the watermark to the head', () => {
    const ids = range(1, 43);
    const before = [
      { lo: 24, hi: 43 },
      { lo: 0, hi: 20 },
    ];
    const storedAbove = ids.filter((id) => id > 23).length;
    const start = repairStartPage(storedAbove, 10);
    assert.ok(
      pageOf(ids, start).rawIds.some((id) => id >= 24),
      'the start page reaches the gap from above',
    );
    const walk = provenByRun([pageOf(ids, start), pageOf(ids, start + 1)]);
    const report = judgeCompleteness([...before, ...walk], 43);
    assert.equal(report.complete, true);
    assert.equal(report.watermark, 43);
  });

  it('neighbouring pages that join by consecutive rawIds need no re-fetch', () => {
    const proven = [
      { lo: 21, hi: 30 },
      { lo: 11, hi: 20 },
      { lo: 0, hi: 10 },
    ];
    assert.equal(judgeCompleteness(proven, 30).complete, true);
  });

  it('a hole in the rawId sequence inside one page is proven absent, not reported as a gap', () => {
    const ids = [1, 2, 3, 7, 8, 9, 15];
    const proven = provenByRun([pageOf(ids, 1)]);
    assert.equal(judgeCompleteness(proven, 15).complete, true);
    assert.deepEqual(findRawIdHoles(ids, proven), [
      { lo: 4, hi: 6 },
      { lo: 10, hi: 14 },
    ]);
  });

  it('a hole between two runs that never met is not claimed absent', () => {
    const proven = [
      { lo: 0, hi: 5 },
      { lo: 9, hi: 12 },
    ];
    assert.deepEqual(findRawIdHoles([1, 2, 5, 9, 12], proven), [
      { lo: 3, hi: 4 },
      { lo: 10, hi: 11 },
    ]);
    assert.deepEqual(judgeCompleteness(proven, 12).gaps, [{ lo: 6, hi: 8 }]);
  });

  it('without the last page the bottom stays unproven and no watermark is given', () => {
    const ids = range(1, 30);
    const report = judgeCompleteness(provenByRun([pageOf(ids, 1), pageOf(ids, 2)]), 30);
    assert.equal(report.watermark, null);
    assert.deepEqual(report.gaps, [{ lo: 0, hi: 10 }]);
  });

  it('an empty page right after a page proves the end of the list', () => {
    const proven = provenByRun([
      { page: 4, rawIds: [5, 4, 3], totalPages: 5 },
      { page: 5, rawIds: [], totalPages: 5 },
    ]);
    assert.deepEqual(proven, [{ lo: 0, hi: 5 }]);
  });

  it('merges touching ranges and finds the uncovered parts of a target', () => {
    assert.deepEqual(
      mergeRanges([
        { lo: 5, hi: 9 },
        { lo: 0, hi: 4 },
        { lo: 20, hi: 25 },
      ]),
      [
        { lo: 0, hi: 9 },
        { lo: 20, hi: 25 },
      ],
    );
    assert.deepEqual(findGaps([{ lo: 3, hi: 4 }], { lo: 0, hi: 10 }), [
      { lo: 0, hi: 2 },
      { lo: 5, hi: 10 },
    ]);
  });

  it('splits pages into consecutive ranges that cover every page once', () => {
    assert.deepEqual(splitPages(23, 10), [
      { from: 1, to: 10 },
      { from: 11, to: 20 },
      { from: 21, to: 23 },
    ]);
    assert.deepEqual(splitPages(0, 10), []);
  });
});
