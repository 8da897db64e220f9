/**
 * Records that become visible after records with higher rawIds (a service whose writes commit
 * out of order): by page number, the first tail a settling window after a gap was seen reads
 * again below its watermark, so a record shown late is fetched by it, and a settled span is not
 * read again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { walkStream } from '../../src/sync/walk/walk-stream.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'test-runner';
const WINDOW = 3000;

/** A list of 1..count without `late`, which the service shows only when `show` is called. */
function listWithLate(count: number, late: number[]) {
  const list = new LiveList({ count });
  const held = list.records.filter((tx) => late.includes(tx.rawId));
  list.records.splice(0, list.records.length, ...list.records.filter((tx) => !late.includes(tx.rawId)));
  return {
    list,
    show() {
      list.records.push(...held);
      list.records.sort((a, b) => a.rawId - b.rawId);
    },
  };
}

describe('records that become visible late', () => {
  it('a record missing while the backfill read its page is fetched by the first tail a window after it', async () => {
    const { list, show } = listWithLate(200, [195, 120]);
    const store = new MemoryStore();
    let clock = 0;
    const now = () => clock;
    await walkStream({ store, fetchPage: list.fetchPage, spec, owner, settleMs: WINDOW, now });
    assert.equal(storedIds(store).includes(195), false);
    show();
    clock = 1000;
    list.add(5);
    await walkStream({ store, fetchPage: list.fetchPage, spec, owner, settleMs: WINDOW, now });
    assert.equal(storedIds(store).includes(195), false, 'a tail before the window reads only what is new');
    clock = WINDOW;
    const tail = await walkStream({ store, fetchPage: list.fetchPage, spec, owner, settleMs: WINDOW, now });
    assert.equal(tail.finished, true);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
      'both late records are stored',
    );
  });

  it('reads below the watermark once a gap read too soon is a window old, then only what is new', async () => {
    const list = new LiveList({ count: 100 });
    const store = new MemoryStore();
    let clock = 0;
    const now = () => clock;
    const walk = () => walkStream({ store, fetchPage: list.fetchPage, spec, owner, settleMs: WINDOW, now });
    const pagesOf = async (run: () => Promise<unknown>) => {
      const before = list.served.length;
      await run();
      return list.served.length - before;
    };
    await walk();
    // Twenty arrive; 110 is not shown yet.
    list.add(20);
    const held = list.records.splice(
      list.records.findIndex((tx) => tx.rawId === 110),
      1,
    );
    clock = 500;
    await walk();
    clock = 1000;
    list.add(10);
    await walk();
    assert.equal(storedIds(store).includes(110), false, 'not listed yet');
    list.records.push(...held);
    list.records.sort((a, b) => a.rawId - b.rawId);
    clock = 2000;
    assert.equal(await pagesOf(walk), 1, 'before the window, only the head page');
    assert.equal(storedIds(store).includes(110), false);
    clock = 3500;
    assert.ok((await pagesOf(walk)) >= 3, 'the tail reads down to the gap, below its watermark');
    assert.equal(storedIds(store).includes(110), true, 'the record shown late is stored');
    clock = 6000;
    assert.equal(await pagesOf(walk), 1, 'once no gap is open, a tail reads only the head page');
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });
});
