import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSettleTracker, type SettleState, settleAfterWalk, tailStop } from '../../src/sync/settle.js';

const WINDOW = 3000;

describe('the settling tracker of a walk', () => {
  /** Ten rawIds a page, newest first, from `head`, without the rawIds in `holes`. */
  const pages = (head: number, count: number, holes: number[] = []): number[][] => {
    const ids = Array.from({ length: count * 10 + holes.length }, (_, i) => head - i).filter(
      (id) => !holes.includes(id),
    );
    return Array.from({ length: count }, (_, p) => ids.slice(p * 10, p * 10 + 10));
  };

  it('counts a gap read before the head settled as unsettled, and one read after as settled', () => {
    const tracker = createSettleTracker({
      windowMs: WINDOW,
      width: 2,
      firstPage: 1,
      startedAt: 0,
      headAt: undefined,
    });
    // Pages 1-3 accepted within the window (pages up to 3 + 2 may be requested by then), the rest after.
    const times = [100, 200, 2900, 3200, 3300, 3400, 3500, 3600];
    pages(1000, 8, [985, 930]).forEach((ids, i) => {
      tracker.accepted(i + 1, ids, times[i]!);
    });
    assert.equal(tracker.headAt(), 100);
    // 985 was missing from page 2, read too soon: it may still fill in. 930 (page 7) was read after.
    assert.equal(tracker.settledBelow(false), 984);
  });

  it('settles everything read before the window that runs without a gap', () => {
    const tracker = createSettleTracker({
      windowMs: WINDOW,
      width: 4,
      firstPage: 1,
      startedAt: 0,
      headAt: undefined,
    });
    pages(500, 3).forEach((ids, i) => {
      tracker.accepted(i + 1, ids, 10 * (i + 1));
    });
    assert.equal(tracker.settledBelow(false), Number.POSITIVE_INFINITY);
    assert.equal(
      tracker.settledBelow(true),
      0,
      'to the bottom of the list: the rawIds below its oldest record may fill in',
    );
  });

  it('counts the space between two pages as read with the later one', () => {
    const tracker = createSettleTracker({
      windowMs: WINDOW,
      width: 1,
      firstPage: 1,
      startedAt: 0,
      headAt: undefined,
    });
    tracker.accepted(1, [100, 99, 98], 10);
    tracker.accepted(2, [95, 94], 20);
    assert.equal(tracker.settledBelow(false), 95);
  });

  it('knows nothing of the pages of an earlier run, and trusts a resumed run read long after the head', () => {
    const resumedLate = createSettleTracker({
      windowMs: WINDOW,
      width: 4,
      firstPage: 7,
      startedAt: 60_000,
      headAt: 1_000,
    });
    const [p7, p8] = pages(940, 2, [935]);
    resumedLate.accepted(7, p7!, 60_010);
    resumedLate.accepted(8, p8!, 60_020);
    assert.equal(resumedLate.settledBelow(false), 940, 'everything from the first page of this run down');
    const resumedSoon = createSettleTracker({
      windowMs: WINDOW,
      width: 4,
      firstPage: 7,
      startedAt: 1_500,
      headAt: 1_000,
    });
    resumedSoon.accepted(7, p7!, 1_510);
    assert.equal(resumedSoon.settledBelow(false), 934);
  });

  it('settles everything with a window of 0', () => {
    const tracker = createSettleTracker({
      windowMs: 0,
      width: 4,
      firstPage: 1,
      startedAt: 0,
      headAt: undefined,
    });
    pages(100, 2, [95]).forEach((ids, i) => {
      tracker.accepted(i + 1, ids, 0);
    });
    assert.equal(tracker.settledBelow(true), Number.POSITIVE_INFINITY);
  });
});

describe('the settling state after a walk', () => {
  const none: SettleState = { settled: null, pending: null };
  const base = { settledBelow: null, fromPageOne: true, windowMs: WINDOW, headAt: undefined };

  it('a backfill settles what it read after the window and leaves its head pending', () => {
    const after = settleAfterWalk({
      ...base,
      state: { ...none, watermark: null },
      mode: 'backfill',
      settledBelow: 950,
      startedAt: 0,
      watermark: 1000,
      headAt: 100,
      now: 9_000,
    });
    assert.deepEqual(after, { settled: 950, pending: { rawId: 1000, at: 100 } });
  });

  it('a tail begun a window after the pending head settles it, and its own head waits', () => {
    const state = { settled: 950, pending: { rawId: 1000, at: 100 }, watermark: 1000 };
    const soon = settleAfterWalk({
      ...base,
      state,
      mode: 'tail',
      startedAt: 2_000,
      watermark: 1040,
      headAt: 2_010,
      now: 2_100,
    });
    assert.deepEqual(
      soon,
      { settled: 950, pending: { rawId: 1000, at: 100 } },
      'too soon: the older head stays pending',
    );
    const later = settleAfterWalk({
      ...base,
      state,
      mode: 'tail',
      startedAt: 3_100,
      watermark: 1090,
      headAt: 3_110,
      now: 3_200,
    });
    assert.deepEqual(later, { settled: 1000, pending: { rawId: 1090, at: 3_110 } });
  });

  it('a tail resumed mid-walk settles no pending head (it did not read the span down to the mark in this run)', () => {
    const state = { settled: 950, pending: { rawId: 1000, at: 100 }, watermark: 1000 };
    const after = settleAfterWalk({
      ...base,
      state,
      mode: 'tail',
      fromPageOne: false,
      startedAt: 50_000,
      watermark: 1090,
      now: 50_100,
    });
    assert.equal(after.settled, 950);
  });

  it('trusts the watermark of a mirror without a mark, and leaves its new head pending', () => {
    const after = settleAfterWalk({
      ...base,
      state: { ...none, watermark: 700 },
      mode: 'tail',
      startedAt: 10,
      watermark: 730,
      headAt: 20,
      now: 30,
    });
    assert.deepEqual(after, { settled: 700, pending: { rawId: 730, at: 20 } });
    assert.equal(
      tailStop({ watermark: 730, settled: after.settled }),
      700,
      'the next tail reads down to 700',
    );
    assert.equal(tailStop({ watermark: 730, settled: null }), 730);
  });

  it('never settles above the watermark, and has nothing pending once all is settled', () => {
    const state = { settled: 10, pending: { rawId: 50, at: 0 }, watermark: 50 };
    const after = settleAfterWalk({
      ...base,
      state,
      mode: 'tail',
      startedAt: 10_000,
      watermark: 50,
      now: 10_100,
    });
    assert.deepEqual(after, { settled: 50, pending: null });
  });
});
