import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkRange, findGaps, mergeRanges, provenPrefixEnd } from '../../src/domain/raw-id-ranges.js';

describe('the arithmetic of rawId ranges', () => {
  it('merges ranges that overlap or touch, and leaves the gaps between them', () => {
    const proven = [
      { lo: 21, hi: 30 },
      { lo: 0, hi: 10 },
      { lo: 11, hi: 14 },
    ];
    assert.deepEqual(mergeRanges(proven), [
      { lo: 0, hi: 14 },
      { lo: 21, hi: 30 },
    ]);
    assert.deepEqual(findGaps(proven, { lo: 0, hi: 40 }), [
      { lo: 15, hi: 20 },
      { lo: 31, hi: 40 },
    ]);
  });

  it('cuts a range into chunks ending on multiples of the width, so later cuts line up', () => {
    assert.deepEqual(chunkRange({ lo: 0, hi: 25 }, 10), [
      { lo: 0, hi: 10 },
      { lo: 11, hi: 20 },
      { lo: 21, hi: 25 },
    ]);
    assert.deepEqual(chunkRange({ lo: 14, hi: 31 }, 10), [
      { lo: 14, hi: 20 },
      { lo: 21, hi: 30 },
      { lo: 31, hi: 31 },
    ]);
  });

  it('reaches from rawId 0 to the first gap: where a watermark may stand, never past a gap', () => {
    const proven = [
      { lo: 11, hi: 20 },
      { lo: 0, hi: 10 },
      { lo: 25, hi: 40 },
    ];
    assert.equal(provenPrefixEnd(proven), 20);
    assert.equal(provenPrefixEnd(proven, 15), 15, 'at most the head asked for');
    assert.equal(provenPrefixEnd([{ lo: 1, hi: 40 }]), null, 'rawId 0 not proven');
    assert.equal(provenPrefixEnd([]), null);
  });
});
