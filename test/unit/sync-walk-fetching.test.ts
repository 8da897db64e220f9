import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tailPagesAtMost } from '../../src/domain/page-links.js';

import type { StreamSpec } from '../../src/domain/stream-key.js';
import { walkStream } from '../../src/sync/walk/walk-stream.js';
import { withSeed } from '../helpers/seed.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'test-runner';
// These tests follow the walk's paging, so records settle at once (`settleMs: 0`); the settling
// window has tests of its own (sync-settle.test.ts, sync-late-arrivals.test.ts).
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A list whose rawIds skip one number after the record with the given index (oldest first, from 0). */
function listWithHoleAfter(count: number, index: number): LiveList {
  let added = 0;
  return new LiveList({ count, step: () => (added++ === index ? 2 : 1) });
}

async function backfilled(list: LiveList): Promise<MemoryStore> {
  const store = new MemoryStore();
  await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
  list.served.length = 0;
  return store;
}

describe('walkStream: pages fetched', () => {
  it('fetches again only the page after a rawId hole on a page boundary, not the pages ahead', async () => {
    // 120 records; the hole lies between pages 2 and 3 (newest first).
    const list = listWithHoleAfter(120, 99);
    const store = new MemoryStore();
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 8,
    });
    assert.equal(result.refetched, 1);
    assert.equal(list.served.filter((page) => page === 3).length, 2, 'page 3 fetched twice');
    assert.equal(list.served.length, 13, `12 pages and one fetched again (${list.served.join(' ')})`);
    assert.equal(store.rows.size, 120);
  });

  it('tails a list with no arrivals in exactly the pages down to the watermark', async () => {
    const list = new LiveList({ count: 300 });
    const store = await backfilled(list);
    list.add(95);
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 8,
    });
    assert.equal(result.mode, 'tail');
    assert.deepEqual(
      [...list.served].sort((a, b) => a - b),
      range(1, 10),
      'the watermark is on page 10, nothing past it',
    );
    assert.deepEqual(storedIds(store), range(1, 395));
  });

  it('ends a tail on the page that joins the watermark, without the page showing it', async () => {
    const list = new LiveList({ count: 300 });
    const store = await backfilled(list);
    list.add(20);
    await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner, concurrency: 8 });
    assert.deepEqual(
      [...list.served].sort((a, b) => a - b),
      [1, 2],
      'rawIds 320..301 fill pages 1 and 2',
    );
    assert.deepEqual(storedIds(store), range(1, 320));
  });

  it('tails a list with a rawId hole above the watermark without a page too many', async () => {
    let added = 0;
    const list = new LiveList({ count: 300, step: () => (added++ === 305 ? 2 : 1) });
    const store = await backfilled(list);
    // 19 records over rawIds 301..320: the watermark's record is the 20th, on page 2.
    list.add(19);
    await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner, concurrency: 8 });
    assert.deepEqual(
      [...list.served].sort((a, b) => a - b),
      [1, 2],
      'the watermark record moved up to page 2',
    );
    assert.equal(store.rows.size, 319);
  });

  it('tails past the estimate one page at a time when records arrive during the walk', async () => {
    const list = new LiveList({ count: 300 });
    const store = await backfilled(list);
    list.add(60);
    list.afterServe = () => list.add(4);
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 8,
    });
    assert.equal(result.finished, true);
    for (const id of range(1, 360)) assert.ok(store.rows.has(id), `record ${id} stored`);
  });

  it('never has more requests unanswered than its concurrency', () =>
    withSeed(async (rng) => {
      for (const concurrency of [1, 3, 8]) {
        const list = new LiveList({ count: 400, step: () => rng.int(1, 2) });
        list.jitterMs = 3;
        list.afterServe = () => list.add(rng.int(0, 2));
        let unanswered = 0;
        let most = 0;
        const fetchPage = async (s: StreamSpec, page: number) => {
          most = Math.max(most, ++unanswered);
          try {
            return await list.fetchPage(s, page);
          } finally {
            unanswered--;
          }
        };
        const store = new MemoryStore();
        await walkStream({ settleMs: 0, store, fetchPage, spec, owner, concurrency });
        assert.ok(most <= concurrency, `${most} requests at once with concurrency ${concurrency}`);
        assert.ok(store.rows.size >= 400);
      }
    }));
});

describe('tailPagesAtMost', () => {
  const walk = { mode: 'tail' as const, nextPage: 1, headRawId: 1000, totalPages: 200 };

  it('bounds a tail walk by the head seen on page 1, tighter as lower records are seen', () => {
    // 1000 records above the watermark fill pages 1..100, the last of them joining it (rawId 1).
    assert.equal(tailPagesAtMost({ walk, watermark: 0, lowestSeen: null }), 100);
    assert.equal(tailPagesAtMost({ walk, watermark: 995, lowestSeen: null }), 1);
    assert.equal(tailPagesAtMost({ walk, watermark: 1000, lowestSeen: null }), 1);
    // 50 pages in and the lowest rawId seen is 400: at most 40 more pages hold records above 0.
    assert.equal(tailPagesAtMost({ walk: { ...walk, nextPage: 51 }, watermark: 0, lowestSeen: 400 }), 90);
  });

  it('sets no bound on a backfill or before the head is known', () => {
    assert.equal(
      tailPagesAtMost({ walk: { ...walk, mode: 'backfill' }, watermark: 0, lowestSeen: null }),
      null,
    );
    assert.equal(
      tailPagesAtMost({ walk: { ...walk, headRawId: null }, watermark: 0, lowestSeen: null }),
      null,
    );
    assert.equal(tailPagesAtMost({ walk, watermark: null, lowestSeen: null }), null);
  });
});
