import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TxKeyPage } from '../../src/domain/model.js';

import type { FetchKeyPage } from '../../src/sync/ports/fetches.js';
import { walkByKey } from '../../src/sync/walk/key-walk.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'key-runner';

/** The list answered by key, ascending after the cursor; at most `cap` records an answer. */
function byKey(list: LiveList, cap = Number.POSITIVE_INFINITY) {
  const requests: Array<{ cursor: number; count: number | undefined }> = [];
  const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count }) => {
    requests.push({ cursor, count });
    const after = list.records.filter((tx) => tx.rawId > cursor).sort((a, b) => a.rawId - b.rawId);
    const served = after.slice(0, Math.min(count ?? 10, cap));
    const page: TxKeyPage = {
      txs: structuredClone(served),
      rejected: [],
      hasNextPage: after.length > served.length,
    };
    return page;
  };
  return { fetchKeyPage, requests };
}

describe('a walk by key', () => {
  it('backfills the list a hundred records a request, then tails from the settled mark', async () => {
    const list = new LiveList({ count: 1000 });
    const key = byKey(list);
    const store = new MemoryStore();
    let clock = 0;
    const now = () => clock;
    const first = await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, now });
    assert.equal(first.finished, true);
    assert.equal(first.watermark, 1000);
    assert.equal(key.requests.length, 10, 'ten requests of a hundred');
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    list.add(30);
    clock = 10_000;
    key.requests.length = 0;
    const tail = await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, now });
    assert.equal(tail.watermark, 1030);
    assert.equal(key.requests.length, 1, 'one request for thirty new records');
    assert.equal(storedIds(store).length, 1030);
  });

  it('commits answers of large records a few at a time: a batch is bounded by bytes, not by answers', async () => {
    const list = new LiveList({ count: 400 });
    // 100 KB of data a record (one string, shared): an answer of a hundred is about 10 MB.
    const data = 'x'.repeat(100_000);
    for (const tx of list.records) tx.data = data;
    const key = byKey(list);
    const store = new MemoryStore();
    // Slow commits: the answers read meanwhile would join the next one, up to eight of them.
    const commitPage = store.commitPage.bind(store);
    store.commitPage = async (commit) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return commitPage(commit);
    };
    const result = await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100 });
    assert.equal(result.finished, true);
    assert.equal(storedIds(store).length, 400);
    const largest = Math.max(...store.commits.map((c) => c.pages.flatMap((p) => p.records).length));
    assert.equal(largest, 100, 'each answer of about 10 MB is a batch of its own');
  });

  it('follows a server that answers fewer records than asked (a silent cap) from the last rawId it gave', async () => {
    const list = new LiveList({ count: 95 });
    const key = byKey(list, 20);
    const store = new MemoryStore();
    const result = await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100 });
    assert.equal(result.finished, true);
    assert.equal(key.requests.length, 5);
    assert.deepEqual(
      key.requests.map((r) => r.cursor),
      [0, 20, 40, 60, 80],
    );
    assert.equal(storedIds(store).length, 95);
  });

  it('fetches a record the service listed only after higher rawIds, on a later tail', async () => {
    const list = new LiveList({ count: 50 });
    const store = new MemoryStore();
    let clock = 0;
    const now = () => clock;
    const key = byKey(list);
    await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, now, settleMs: 3000 });
    list.add(20);
    const late = list.records.splice(
      list.records.findIndex((tx) => tx.rawId === 60),
      1,
    );
    clock = 1000;
    await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, now, settleMs: 3000 });
    assert.equal(storedIds(store).includes(60), false);
    list.records.push(...late);
    list.records.sort((a, b) => a.rawId - b.rawId);
    clock = 2000;
    await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, now, settleMs: 3000 });
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
      'the late record is stored',
    );
    // A window later, with no gap left open, a tail asks from the head only.
    clock = 10_000;
    await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, now, settleMs: 3000 });
    key.requests.length = 0;
    clock = 20_000;
    await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, now, settleMs: 3000 });
    assert.deepEqual(key.requests, [{ cursor: 70, count: 100 }]);
  });

  it('with a settling window of 0, tails from the watermark however many rawIds are missing', async () => {
    const list = new LiveList({ count: 300, step: () => 2 });
    const key = byKey(list);
    const store = new MemoryStore();
    await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100, settleMs: 0 });
    list.add(5);
    key.requests.length = 0;
    const tail = await walkByKey({
      store,
      fetchKeyPage: key.fetchKeyPage,
      spec,
      owner,
      count: 100,
      settleMs: 0,
    });
    assert.deepEqual(
      key.requests.map((r) => r.cursor),
      [599],
      'one request, from the watermark',
    );
    assert.equal(tail.watermark, 609);
  });

  it('resumes a stopped backfill from its cursor, asking nothing twice', async () => {
    const list = new LiveList({ count: 500 });
    const key = byKey(list);
    const store = new MemoryStore();
    const stop = new AbortController();
    let answers = 0;
    const stopping: FetchKeyPage = async (s, q) => {
      if (++answers === 3) stop.abort(new Error('SIGTERM'));
      return key.fetchKeyPage(s, q);
    };
    const first = await walkByKey({
      store,
      fetchKeyPage: stopping,
      spec,
      owner,
      count: 100,
      signal: stop.signal,
    });
    assert.equal(first.finished, false);
    key.requests.length = 0;
    const second = await walkByKey({ store, fetchKeyPage: key.fetchKeyPage, spec, owner, count: 100 });
    assert.equal(second.finished, true);
    assert.equal(key.requests[0]?.cursor, 300, 'resumed after the last committed record');
    assert.equal(storedIds(store).length, 500);
  });

  it('fails, never loops, on an answer that says more follow but holds nothing new', async () => {
    const store = new MemoryStore();
    const stuck: FetchKeyPage = async () => ({ txs: [], rejected: [], hasNextPage: true });
    await assert.rejects(
      walkByKey({ store, fetchKeyPage: stuck, spec, owner, emptyPageDelayMs: 1 }),
      /empty answer although more records follow/,
    );
  });
});
