/**
 * A tail by key that begins at the head: one `order=desc` answer of the newest records is the
 * whole tail when it reaches the settled mark, and re-reads the records stored below the
 * watermark with the same request; otherwise the walk reads ascending from the mark up to it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TxKeyPage } from '../../src/domain/model.js';
import type { FetchKeyPage } from '../../src/sync/ports/fetches.js';
import { walkByKey } from '../../src/sync/walk/key-walk.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'head-runner';
const WINDOW = 3000;

interface Asked {
  cursor: number;
  order: 'asc' | 'desc';
}

/**
 * The list by key as the service answers it: ascending after the cursor, or newest first before
 * it (from the head without one); at most `cap` records an answer. `ignoreOrder`: a server that
 * answers every request ascending.
 */
function byKey(list: LiveList, options: { cap?: number; ignoreOrder?: boolean } = {}) {
  const asked: Asked[] = [];
  const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count, order }) => {
    const direction = options.ignoreOrder ? 'asc' : (order ?? 'asc');
    asked.push({ cursor, order: order ?? 'asc' });
    const ascending = [...list.records].sort((a, b) => a.rawId - b.rawId);
    const size = Math.min(count ?? 10, options.cap ?? Number.POSITIVE_INFINITY);
    const rest =
      direction === 'asc'
        ? ascending.filter((tx) => tx.rawId > cursor)
        : ascending.filter((tx) => cursor === 0 || tx.rawId < cursor).reverse();
    const served = rest.slice(0, size);
    const page: TxKeyPage = { txs: structuredClone(served), rejected: [], hasNextPage: rest.length > size };
    return page;
  };
  return { fetchKeyPage, asked };
}

function walker(key: ReturnType<typeof byKey>, store: MemoryStore, clock: { now: number }) {
  return () =>
    walkByKey({
      store,
      fetchKeyPage: key.fetchKeyPage,
      spec,
      owner,
      count: 100,
      settleMs: WINDOW,
      headFirst: true,
      now: () => clock.now,
    });
}

describe('a tail by key that begins at the head', () => {
  it('is one newest-first request that also brings the records below the watermark current', async () => {
    const list = new LiveList({ count: 300 });
    const key = byKey(list);
    const store = new MemoryStore();
    const clock = { now: 0 };
    const walk = walker(key, store, clock);
    await walk();
    // Thirty arrive; forty stored just below the watermark are packaged meanwhile.
    list.add(30);
    for (const tx of list.records.filter((t) => t.rawId > 260 && t.rawId <= 300)) {
      tx.status = 'packaged';
      tx.id = 'batch-1';
      tx.timestamp = 1_700_000_000_000;
    }
    key.asked.length = 0;
    clock.now = 10_000;
    const tail = await walk();
    assert.deepEqual(key.asked, [{ cursor: 0, order: 'desc' }], 'one request, from the head');
    assert.equal(tail.watermark, 330);
    assert.equal(tail.counts.inserted, 30);
    assert.equal(tail.counts.updated, 40, 'the packaged records read again with the same request');
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });

  it('when more arrived than one answer holds, reads ascending from the mark only up to it', async () => {
    const list = new LiveList({ count: 100 });
    const key = byKey(list);
    const store = new MemoryStore();
    const clock = { now: 0 };
    const walk = walker(key, store, clock);
    await walk();
    list.add(250);
    key.asked.length = 0;
    clock.now = 10_000;
    const tail = await walk();
    assert.deepEqual(key.asked, [
      { cursor: 0, order: 'desc' },
      { cursor: 100, order: 'asc' },
      { cursor: 200, order: 'asc' },
    ]);
    assert.equal(tail.finished, true);
    assert.equal(tail.watermark, 350);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });

  it('with a server that answers fewer records than asked, joins the head answer all the same', async () => {
    const list = new LiveList({ count: 100 });
    const key = byKey(list, { cap: 20 });
    const store = new MemoryStore();
    const clock = { now: 0 };
    const walk = walker(key, store, clock);
    await walk();
    list.add(45);
    key.asked.length = 0;
    clock.now = 10_000;
    await walk();
    assert.deepEqual(
      key.asked.map((a) => `${a.order}:${a.cursor}`),
      ['desc:0', 'asc:100', 'asc:120'],
    );
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });

  it('takes an answer that is not newest first for no head, and reads ascending from the mark', async () => {
    const list = new LiveList({ count: 300 });
    const key = byKey(list, { ignoreOrder: true });
    const store = new MemoryStore();
    const clock = { now: 0 };
    const walk = walker(key, store, clock);
    await walk();
    list.add(30);
    key.asked.length = 0;
    clock.now = 10_000;
    const tail = await walk();
    assert.deepEqual(
      key.asked.map((a) => `${a.order}:${a.cursor}`),
      ['desc:0', 'asc:300'],
    );
    assert.equal(tail.watermark, 330);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });

  it('keeps the settled mark below a gap it read too soon, and the next tail fetches the late record', async () => {
    const list = new LiveList({ count: 100 });
    const key = byKey(list);
    const store = new MemoryStore();
    const clock = { now: 0 };
    const walk = walker(key, store, clock);
    await walk();
    list.add(20);
    const late = list.records.splice(
      list.records.findIndex((tx) => tx.rawId === 110),
      1,
    );
    clock.now = 1000;
    await walk();
    assert.equal(storedIds(store).includes(110), false);
    assert.equal(store.streams.get('txs')?.settle.settled, 109, 'settled below the gap only');
    list.records.push(...late);
    list.add(130);
    key.asked.length = 0;
    clock.now = 2000;
    await walk();
    assert.deepEqual(
      key.asked.map((a) => `${a.order}:${a.cursor}`),
      ['desc:0', 'asc:109'],
      'the head answer does not reach the mark: ascending from it, up to the head answer',
    );
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId).sort((a, b) => a - b),
      'the late record is stored',
    );
  });

  it('a walk resumed from its cursor goes on ascending', async () => {
    const list = new LiveList({ count: 100 });
    const key = byKey(list);
    const store = new MemoryStore();
    const clock = { now: 0 };
    const walk = walker(key, store, clock);
    await walk();
    list.add(250);
    const stop = new AbortController();
    clock.now = 10_000;
    // Stopped once the first answer ascending from the mark is in.
    const stopped = await walkByKey({
      store,
      fetchKeyPage: async (s, query) => {
        const answer = await key.fetchKeyPage(s, query);
        if (query.order !== 'desc') stop.abort(new Error('test stop'));
        return answer;
      },
      spec,
      owner,
      count: 100,
      settleMs: WINDOW,
      headFirst: true,
      now: () => clock.now,
      signal: stop.signal,
    });
    assert.equal(stopped.finished, false);
    key.asked.length = 0;
    await walk();
    assert.deepEqual(
      key.asked.map((a) => `${a.order}:${a.cursor}`),
      ['asc:200', 'asc:300'],
    );
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });

  it('not right after a backfill in lanes: that tail reads only what arrived since their head', async () => {
    const list = new LiveList({ count: 300 });
    const key = byKey(list);
    const store = new MemoryStore();
    const clock = { now: 0 };
    await walker(key, store, clock)();
    list.add(30);
    key.asked.length = 0;
    clock.now = 10_000;
    await walkByKey({
      store,
      fetchKeyPage: key.fetchKeyPage,
      spec,
      owner,
      count: 100,
      settleMs: WINDOW,
      headFirst: true,
      fromWatermark: true,
      now: () => clock.now,
    });
    assert.deepEqual(key.asked, [{ cursor: 300, order: 'asc' }]);
  });
});
