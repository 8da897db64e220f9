import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settledByRun } from '../../src/sync/backfill/run-check.js';
import type { SettleState } from '../../src/sync/ports/sync-store.js';
import {
  createSettleTracker,
  openGapLow,
  type SettleMark,
  settleAfterWalk,
  tailReadsToMark,
  tailStop,
} from '../../src/sync/settle.js';

const WINDOW = 3000;

/** Confirmed records (not packaged: `timestamp` 0) of the given rawIds. */
const young = (...ids: number[]): SettleMark[] => ids.map((rawId) => ({ rawId, timestamp: 0 }));

describe('a gap and when it settles', () => {
  const base = { above: null, headAt: 1_000, windowMs: WINDOW };

  it('is open while read less than a window after the head was seen', () => {
    const records = young(100, 99, 97, 96, 93);
    assert.equal(openGapLow({ ...base, records, readAt: 3_999 }), 94);
    assert.equal(openGapLow({ ...base, records, readAt: 4_000 }), null);
  });

  it('is settled at once below a record packaged long before the read (service clock, with a margin)', () => {
    const long = Date.parse('2026-01-01T00:00:00Z');
    const records: SettleMark[] = [
      { rawId: 100, timestamp: 0 },
      { rawId: 98, timestamp: long },
      { rawId: 50, timestamp: long },
      { rawId: 40, timestamp: long },
    ];
    // 99 may still fill in; 51-97 and 41-49 lie below records packaged a year before the read.
    assert.equal(openGapLow({ ...base, records, readAt: long + 365 * 86_400_000, headAt: undefined }), 99);
    assert.equal(openGapLow({ ...base, records: records.slice(2), readAt: long + 365 * 86_400_000 }), null);
  });

  it('counts the gap between a page and the one before, and, at the end of the list, the rawIds below it', () => {
    assert.equal(
      openGapLow({ ...base, records: young(95, 94), above: { rawId: 100, timestamp: 0 }, readAt: 1_500 }),
      96,
    );
    assert.equal(openGapLow({ ...base, records: young(5, 4), readAt: 1_500, bottom: true }), 1);
    assert.equal(openGapLow({ ...base, records: young(2, 1), readAt: 1_500, bottom: true }), null);
  });
});

describe('the settling tracker of a walk', () => {
  /** Ten young records a page, newest first, from `head`, without the rawIds in `holes`. */
  const pages = (head: number, count: number, holes: number[] = []): SettleMark[][] => {
    const ids = Array.from({ length: count * 10 + holes.length }, (_, i) => head - i).filter(
      (id) => !holes.includes(id),
    );
    return Array.from({ length: count }, (_, p) => young(...ids.slice(p * 10, p * 10 + 10)));
  };

  it('judges each page by when it may have been requested: up to twice the width ahead of the page accepted', () => {
    const tracker = createSettleTracker({
      windowMs: WINDOW,
      width: 1,
      firstPage: 1,
      startedAt: 0,
      headAt: undefined,
    });
    // Page 1 at 100: the head's time. Pages 1-2 may be requested at the start, page p once page p - 2 is in.
    const times = [100, 200, 2900, 3200, 3300, 3400, 3500, 3600];
    pages(1000, 8, [985, 960, 930]).forEach((records, i) => {
      tracker.accepted(i + 1, records, times[i]!);
    });
    assert.equal(tracker.headAt(), 100);
    // 985 (page 2) and 960 (page 5, requested once page 3 was in, at 2900) were read too soon; 930
    // (page 8, requested at 3300, past 100 + 3000) after.
    assert.equal(tracker.settledBelow(false), 959);
  });

  it('settles everything it read without a gap, but for the rawIds below the end of the list', () => {
    const tracker = createSettleTracker({
      windowMs: WINDOW,
      width: 4,
      firstPage: 1,
      startedAt: 0,
      headAt: undefined,
    });
    pages(500, 3).forEach((records, i) => {
      tracker.accepted(i + 1, records, 10 * (i + 1));
    });
    assert.equal(tracker.settledBelow(false), Number.POSITIVE_INFINITY);
    assert.equal(tracker.settledBelow(true), 0, 'the rawIds below its oldest record may fill in');
  });

  it('knows nothing of the pages of an earlier run, and judges a resumed run by the head time kept', () => {
    const [p7, p8] = pages(940, 2, [935]);
    const resumedLate = createSettleTracker({
      windowMs: WINDOW,
      width: 4,
      firstPage: 7,
      startedAt: 60_000,
      headAt: 1_000,
    });
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
    pages(100, 2, [95]).forEach((records, i) => {
      tracker.accepted(i + 1, records, 0);
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
      { settled: 950, pending: { rawId: 1000, at: 100 }, later: [{ rawId: 1040, at: 2_010 }] },
      'too soon: the older head stays pending, and the new one waits after it',
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

describe('a tail by page number that reads below its watermark only when a head has ripened', () => {
  const state = { settled: 950, pending: { rawId: 1000, at: 100 }, watermark: 1000 };
  const tail = {
    state,
    mode: 'tail' as const,
    fromPageOne: true,
    windowMs: WINDOW,
    watermark: 1040,
    now: 2_100,
  };

  it('reads only what is new while every waiting head is younger than the window', () => {
    assert.equal(tailReadsToMark({ state, fromPageOne: true, startedAt: 2_000, windowMs: WINDOW }), false);
    assert.equal(tailReadsToMark({ state, fromPageOne: true, startedAt: 3_100, windowMs: WINDOW }), true);
    assert.equal(
      tailReadsToMark({ state: { pending: null }, fromPageOne: true, startedAt: 0, windowMs: WINDOW }),
      true,
      'with no head waiting, the mark is the watermark',
    );
  });

  it('leaves no head of its own when it saw no gap above the newest head waiting', () => {
    const quiet = { ...tail, settledBelow: null, startedAt: 2_000, headAt: 2_010 };
    assert.deepEqual(settleAfterWalk({ ...quiet, openHigh: null }), {
      settled: 950,
      pending: { rawId: 1000, at: 100 },
    });
    assert.deepEqual(
      settleAfterWalk({ ...quiet, openHigh: 1000 }),
      { settled: 950, pending: { rawId: 1000, at: 100 } },
      'a gap at or below the newest head settles with it',
    );
    assert.deepEqual(
      settleAfterWalk({ ...quiet, openHigh: 1021 }),
      { settled: 950, pending: { rawId: 1000, at: 100 }, later: [{ rawId: 1040, at: 2_010 }] },
      'a gap above it waits under a head of its own',
    );
    assert.deepEqual(
      settleAfterWalk({ ...quiet, fromPageOne: false, openHigh: null }),
      { settled: 950, pending: { rawId: 1000, at: 100 }, later: [{ rawId: 1040, at: 2_010 }] },
      'a tail resumed mid-walk did not see the pages above where it resumed',
    );
  });

  it('counts the highest open gap of a walk as well as the lowest', () => {
    const tracker = createSettleTracker({
      windowMs: WINDOW,
      width: 1,
      firstPage: 1,
      startedAt: 0,
      headAt: 0,
    });
    tracker.accepted(1, young(130, 128, 127, 121), 0);
    tracker.accepted(2, young(120, 119, 117), 0);
    assert.equal(tracker.openHigh(), 129);
    assert.equal(tracker.settledBelow(false), 117);
  });
});

describe('the settling state a proven parallel backfill leaves', () => {
  const never = { settle: { settled: null, pending: null }, watermark: null };

  it('settles the whole list when no range read a gap too soon, else stays below the lowest such gap', () => {
    assert.deepEqual(settledByRun({ headRawId: 500, headAt: 7, openGap: null }, never, WINDOW), {
      settled: 500,
      pending: null,
    });
    assert.deepEqual(settledByRun({ headRawId: 500, headAt: 7, openGap: 480 }, never, WINDOW), {
      settled: 479,
      pending: { rawId: 500, at: 7 },
    });
  });

  it('keeps the heads still waiting: a catch-up adds its own after them rather than replace them', () => {
    const stored = { settle: { settled: 100, pending: { rawId: 300, at: 1_000 } }, watermark: 300 };
    const run = (headAt: number, openGap: number | null) => ({ headRawId: 600, headAt, openGap });
    // Read before the waiting head is a window old, with a gap below it that may still fill.
    assert.deepEqual(settledByRun(run(1_000 + WINDOW - 1, 250), stored, WINDOW), {
      settled: 249,
      pending: { rawId: 300, at: 1_000 },
      later: [{ rawId: 600, at: 1_000 + WINDOW - 1 }],
    });
    // Read once it is a window old: everything at or below it settles.
    assert.deepEqual(settledByRun(run(1_000 + WINDOW, 250), stored, WINDOW), {
      settled: 300,
      pending: { rawId: 600, at: 1_000 + WINDOW },
    });
    // The lowest gap above the waiting head: what the run read below it settles.
    assert.deepEqual(settledByRun(run(1_500, 350), stored, WINDOW), {
      settled: 349,
      pending: { rawId: 600, at: 1_500 },
    });
    // No gap that may fill: the whole stretch settles, whatever waited.
    assert.deepEqual(settledByRun(run(1_500, null), stored, WINDOW), { settled: 600, pending: null });
  });
});
