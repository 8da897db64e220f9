/**
 * A tail that settles the pending head (it began a window after that head was seen) has proven
 * every rawId at or below it; only the gaps above it hold the settled mark back. With none there,
 * the mark moves to the tail's own head, and the next tail reads only what is new.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TxKeyPage } from '../../src/domain/model.js';
import type { FetchKeyPage } from '../../src/sync/ports/fetches.js';
import {
  createSettleTracker,
  MAX_WAITING_HEADS,
  openGapLow,
  promotedHead,
  type SettleMark,
  settleAfterWalk,
} from '../../src/sync/settle.js';
import { walkByKey } from '../../src/sync/walk/key-walk.js';
import { walkStream } from '../../src/sync/walk/walk-stream.js';
import { LiveList, MemoryStore, makeTx, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'settle-runner';
const WINDOW = 3000;

const young = (...ids: number[]): SettleMark[] => ids.map((rawId) => ({ rawId, timestamp: 0 }));

/** The list answered by key, ascending after the cursor; the cursors asked are kept. */
function byKey(list: LiveList) {
  const cursors: number[] = [];
  const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count }) => {
    cursors.push(cursor);
    const after = list.records.filter((tx) => tx.rawId > cursor);
    const served = after.slice(0, count ?? 10);
    const page: TxKeyPage = {
      txs: structuredClone(served),
      rejected: [],
      hasNextPage: after.length > served.length,
    };
    return page;
  };
  return { fetchKeyPage, cursors };
}

/** Appends `n` records, the first of them never listed (a permanent hole in the rawIds). */
function addWithHole(list: LiveList, n: number): number {
  list.add(n);
  const hole = list.records[list.records.length - n]!.rawId;
  list.records.splice(list.records.length - n, 1);
  return hole;
}

describe('the gaps a walk counts, above the pending head it settles', () => {
  it('are those above the floor; a gap across the floor counts from just above it', () => {
    const records = young(130, 128, 120, 115, 110, 105);
    const base = { above: null, readAt: 10, headAt: 0, windowMs: WINDOW };
    assert.equal(openGapLow({ ...base, records }), 106);
    assert.equal(openGapLow({ ...base, records, floor: 120 }), 121);
    assert.equal(openGapLow({ ...base, records, floor: 128 }), 129);
    assert.equal(openGapLow({ ...base, records, floor: 130 }), null);
    // 117 is not among the records read (say it is no longer listed): 118-119 are still missing.
    assert.equal(openGapLow({ ...base, records, floor: 117 }), 118);
    assert.equal(openGapLow({ ...base, records: young(5, 4), bottom: true, floor: 2 }), 3);
  });

  it('the head is settled only by a walk from the top, begun a window after the head was seen', () => {
    const state = { pending: { rawId: 120, at: 500 } };
    assert.equal(promotedHead({ state, fromPageOne: true, startedAt: 3500, windowMs: WINDOW }), 120);
    assert.equal(promotedHead({ state, fromPageOne: true, startedAt: 3499, windowMs: WINDOW }), null);
    assert.equal(promotedHead({ state, fromPageOne: false, startedAt: 9000, windowMs: WINDOW }), null);
    assert.equal(
      promotedHead({ state: { pending: null }, fromPageOne: true, startedAt: 9000, windowMs: WINDOW }),
      null,
    );
  });

  it('of several heads waiting, the highest seen a window before the walk', () => {
    const state = {
      pending: { rawId: 120, at: 500 },
      later: [
        { rawId: 140, at: 1500 },
        { rawId: 160, at: 2500 },
      ],
    };
    assert.equal(promotedHead({ state, fromPageOne: true, startedAt: 4600, windowMs: WINDOW }), 140);
    assert.equal(promotedHead({ state, fromPageOne: true, startedAt: 9000, windowMs: WINDOW }), 160);
  });

  it('keeps the heads of later walks waiting after the oldest, at most a few, dropping the second oldest', () => {
    const heads = Array.from({ length: MAX_WAITING_HEADS }, (_, i) => ({ rawId: 110 + 10 * i, at: 100 * i }));
    const [pending, ...later] = heads;
    const after = settleAfterWalk({
      state: { settled: 100, pending: pending!, later, watermark: heads[heads.length - 1]!.rawId },
      mode: 'tail',
      settledBelow: 100,
      fromPageOne: true,
      startedAt: 1_000,
      windowMs: WINDOW,
      watermark: 500,
      headAt: 1_010,
      now: 1_020,
    });
    assert.equal(after.settled, 100);
    assert.deepEqual(after.pending, pending);
    assert.equal(after.later?.length, MAX_WAITING_HEADS - 1);
    assert.deepEqual(after.later?.[0], heads[2], 'the second oldest dropped');
    assert.deepEqual(after.later?.at(-1), { rawId: 500, at: 1_010 });
  });

  it('a tracker with a floor settles everything it read above it', () => {
    const tracker = createSettleTracker({
      windowMs: WINDOW,
      width: 1,
      firstPage: 1,
      startedAt: 4000,
      headAt: undefined,
      floor: 120,
    });
    tracker.accepted(1, young(140, 139, 138, 137, 136, 135, 134, 133, 132, 131), 4010);
    tracker.accepted(2, young(130, 129, 128, 127, 126, 125, 124, 123, 122, 121), 4020);
    tracker.accepted(3, young(120, 119, 118, 117, 116, 115, 114, 113, 112, 111), 4030);
    tracker.accepted(4, young(109, 108), 4040);
    assert.equal(tracker.settledBelow(false), Number.POSITIVE_INFINITY, '110 lies below the floor');
  });
});

/** A list of 100 walked by page number on a clock of its own, and what each walk read. */
function pageTail() {
  const list = new LiveList({ count: 100 });
  const store = new MemoryStore();
  const clock = { now: 0 };
  const walk = () =>
    walkStream({ store, fetchPage: list.fetchPage, spec, owner, settleMs: WINDOW, now: () => clock.now });
  const pagesRead = async () => {
    const before = list.served.length;
    await walk();
    return list.served.slice(before);
  };
  const settleState = () => store.streams.get('txs')!.settle;
  return { list, store, clock, walk, pagesRead, settleState };
}

describe('a tail that settles the pending head', () => {
  it('by page number: moves the mark to its own head when nothing is missing above the pending head', async () => {
    const list = new LiveList({ count: 100 });
    const store = new MemoryStore();
    let clock = 0;
    const walk = () =>
      walkStream({ store, fetchPage: list.fetchPage, spec, owner, settleMs: WINDOW, now: () => clock });
    await walk();
    addWithHole(list, 20);
    clock = 500;
    await walk();
    list.add(10);
    clock = 1000;
    await walk();
    list.add(10);
    clock = 4000;
    await walk();
    assert.equal(
      store.streams.get('txs')!.settle.settled,
      140,
      'settled up to the head, not to the pending 120',
    );
    assert.equal(store.streams.get('txs')!.settle.pending, null);
    list.add(5);
    clock = 4500;
    const before = list.served.length;
    await walk();
    assert.equal(list.served.length - before, 1, 'the next tail reads only the head page');
  });

  it('by key: the next tail asks from its head, not from the pending head', async () => {
    const list = new LiveList({ count: 100 });
    const key = byKey(list);
    const store = new MemoryStore();
    let clock = 0;
    const walk = () =>
      walkByKey({
        store,
        fetchKeyPage: key.fetchKeyPage,
        spec,
        owner,
        count: 100,
        settleMs: WINDOW,
        now: () => clock,
      });
    await walk();
    addWithHole(list, 20);
    clock = 500;
    await walk();
    list.add(10);
    clock = 1000;
    await walk();
    list.add(10);
    clock = 4000;
    await walk();
    list.add(5);
    clock = 4500;
    key.cursors.length = 0;
    await walk();
    assert.deepEqual(key.cursors, [140]);
  });

  it('still stops below a gap above the pending head until that gap has settled in turn', async () => {
    const list = new LiveList({ count: 100 });
    const key = byKey(list);
    const store = new MemoryStore();
    let clock = 0;
    const walk = () =>
      walkByKey({
        store,
        fetchKeyPage: key.fetchKeyPage,
        spec,
        owner,
        count: 100,
        settleMs: WINDOW,
        now: () => clock,
      });
    await walk();
    addWithHole(list, 20);
    clock = 500;
    await walk();
    const second = addWithHole(list, 10);
    clock = 3600;
    await walk();
    assert.equal(store.streams.get('txs')!.settle.settled, second - 1, 'the newer gap holds the mark');
    key.cursors.length = 0;
    clock = 4000;
    await walk();
    assert.deepEqual(key.cursors, [second - 1], 'read again from below the newer gap');
  });

  it('settles a gap a later tail saw a window after that tail, not a window after the older head settled', async () => {
    const list = new LiveList({ count: 100 });
    const key = byKey(list);
    const store = new MemoryStore();
    let clock = 0;
    const walk = () =>
      walkByKey({
        store,
        fetchKeyPage: key.fetchKeyPage,
        spec,
        owner,
        count: 100,
        settleMs: WINDOW,
        now: () => clock,
      });
    await walk();
    addWithHole(list, 20);
    clock = 500;
    await walk();
    addWithHole(list, 10);
    clock = 1500;
    await walk();
    list.add(5);
    clock = 3600;
    await walk();
    assert.equal(store.streams.get('txs')!.settle.settled, 120, 'the older head settled, the newer gap open');
    list.add(5);
    clock = 4600;
    await walk();
    assert.deepEqual(store.streams.get('txs')!.settle, { settled: 140, pending: null });
    list.add(2);
    key.cursors.length = 0;
    clock = 5000;
    await walk();
    assert.deepEqual(key.cursors, [140], 'the next tail reads only what is new');
  });

  it('by page number: a settled gap the last page shows below the mark does not hold the mark back', async () => {
    const list = new LiveList({ count: 100 });
    list.records.splice(
      list.records.findIndex((tx) => tx.rawId === 97),
      1,
    );
    const store = new MemoryStore();
    let clock = 0;
    const walk = () =>
      walkStream({ store, fetchPage: list.fetchPage, spec, owner, settleMs: WINDOW, now: () => clock });
    await walk();
    clock = 3500;
    await walk();
    assert.deepEqual(store.streams.get('txs')!.settle, { settled: 100, pending: null }, '97 has settled');
    list.add(3);
    clock = 4000;
    await walk();
    assert.deepEqual(
      store.streams.get('txs')!.settle,
      { settled: 103, pending: null },
      'nothing missing above the mark: settled up to the head',
    );
  });

  it('by page number: reads below its watermark only once a waiting head is a window old', async () => {
    const { list, store, clock, walk, pagesRead, settleState } = pageTail();
    await walk();
    clock.now = 3500;
    await walk();
    assert.deepEqual(settleState(), { settled: 100, pending: null });
    const hole = addWithHole(list, 20);
    clock.now = 4000;
    await walk();
    assert.deepEqual(settleState(), { settled: hole - 1, pending: { rawId: 120, at: 4000 } });
    // The gap fills (a record shown late). The next tails, before the head is a window old, read
    // only their new records: one page of ten, which joins the watermark. Without a gap of their
    // own they leave no head waiting: the one waiting covers everything below it.
    list.records.splice(
      list.records.findIndex((tx) => tx.rawId > hole),
      0,
      makeTx(hole),
    );
    list.add(10);
    clock.now = 5000;
    assert.deepEqual(await pagesRead(), [1], 'only down to the watermark');
    assert.equal(store.rows.has(hole), false, 'the span below the watermark is not read yet');
    assert.deepEqual(settleState(), { settled: hole - 1, pending: { rawId: 120, at: 4000 } });
    // A new gap above the waiting head: its tail's head waits after it.
    const second = addWithHole(list, 10);
    clock.now = 6000;
    assert.deepEqual(await pagesRead(), [1]);
    assert.deepEqual(settleState(), {
      settled: hole - 1,
      pending: { rawId: 120, at: 4000 },
      later: [{ rawId: 140, at: 6000 }],
    });
    // A window after the first head: its new records, then the pages that should show the gap
    // (102 ranks 38th, near the end of page 4: pages 4 and 5), which show the late record in it:
    // stored with them. The head settles; the newer one, above it, waits in turn.
    clock.now = 7000;
    assert.deepEqual(await pagesRead(), [1, 4, 5]);
    assert.equal(store.rows.has(hole), true, 'the late record is fetched');
    assert.deepEqual(settleState(), { settled: 120, pending: { rawId: 140, at: 6000 } });
    clock.now = 8000;
    assert.deepEqual(await pagesRead(), [1], 'the newer head is not a window old');
    clock.now = 9000;
    assert.deepEqual(await pagesRead(), [1], 'the first page shows the newer gap closed');
    assert.deepEqual(settleState(), { settled: 140, pending: null });
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
      `everything but the holes (${second} and below)`,
    );
  });

  it('by page number: settles a ripe head by the page that shows its gap closed, not the whole span', async () => {
    const { list, clock, walk, pagesRead, settleState } = pageTail();
    await walk();
    clock.now = 3500;
    await walk();
    const hole = addWithHole(list, 20);
    clock.now = 4000;
    await walk();
    list.add(30);
    clock.now = 5000;
    assert.deepEqual(await pagesRead(), [1, 2, 3]);
    assert.deepEqual(settleState(), {
      settled: hole - 1,
      pending: { rawId: 120, at: 4000 },
    });
    // A window after the head: five new records on page 1, then page 6, where 102 and 100 stand
    // side by side (ranks 53 and 54): the hole is permanent, and nothing is missing above it.
    list.add(5);
    clock.now = 7000;
    assert.deepEqual(await pagesRead(), [1, 6]);
    assert.deepEqual(settleState(), { settled: 155, pending: null });
    list.add(3);
    clock.now = 7500;
    assert.deepEqual(await pagesRead(), [1], 'the next tail reads only what is new');
  });
});
