import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TxKeyPage } from '../../src/domain/model.js';
import type { FetchKeyHead, FetchKeyPage } from '../../src/sync/ports/fetches.js';
import { walkByKey } from '../../src/sync/walk/key-walk.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'window-runner';

/**
 * The list answered by key after a short wait, as a distant service answers: ascending after the
 * cursor, or newest first. Counts the requests and the most that were in flight at once.
 */
function distant(list: LiveList, options: { failAt?: (cursor: number) => boolean } = {}) {
  const requests: Array<{ cursor: number; count: number | undefined; order: string }> = [];
  let inFlight = 0;
  let most = 0;
  const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count, order }) => {
    requests.push({ cursor, count, order: order ?? 'asc' });
    inFlight++;
    most = Math.max(most, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (order !== 'desc' && options.failAt?.(cursor)) throw new Error(`answer after ${cursor} lost`);
      const ascending = [...list.records].sort((a, b) => a.rawId - b.rawId);
      const after = order === 'desc' ? ascending.reverse() : ascending.filter((tx) => tx.rawId > cursor);
      const served = after.slice(0, count ?? 100);
      const page: TxKeyPage = {
        txs: structuredClone(served),
        rejected: [],
        hasNextPage: after.length > served.length,
      };
      return page;
    } finally {
      inFlight--;
    }
  };
  const fetchKeyHead: FetchKeyHead = async () => list.records.at(-1)?.rawId ?? null;
  return { fetchKeyPage, fetchKeyHead, requests, most: () => most };
}

/** Every commit's checkpoint follows on from the one before: the walk's cursors ascend. */
function cursorsAscend(store: MemoryStore): boolean {
  const cursors = store.commits.flatMap((c) => (c.walk?.cursor === undefined ? [] : [c.walk.cursor]));
  return cursors.every((cursor, i) => i === 0 || cursor > cursors[i - 1]!);
}

/**
 * A mirror of `mirrored` records walked by key, then `behind` more arrived a minute later: the
 * store, the list and the walk's clock, set to then.
 */
async function fallenBehind(mirrored: number, behind: number, step?: () => number) {
  const list = new LiveList({ count: mirrored, ...(step ? { step } : {}) });
  const store = new MemoryStore();
  const now = () => 60_000;
  await walkByKey({ store, fetchKeyPage: distant(list).fetchKeyPage, spec, owner, count: 100, now: () => 0 });
  list.add(behind);
  return { list, store, now };
}

describe('a walk by key far behind the head', () => {
  it('reads the stretch to the head in ranges at once, and stores every record once, in order', async () => {
    // A day's arrivals: the tail is fifty answers behind.
    const { list, store, now } = await fallenBehind(300, 5000);
    const key = distant(list);
    const tail = await walkByKey({
      store,
      ...key,
      spec,
      owner,
      count: 100,
      lanes: 6,
      now,
    });
    assert.equal(tail.finished, true);
    assert.equal(tail.watermark, 5300);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    assert.ok(key.most() >= 4, `requests in flight at once: ${key.most()}`);
    assert.ok(cursorsAscend(store), 'commits in the order of the list');
    // Each range's last answer asks no more than its top needs: no answer read twice over.
    const asked = key.requests.reduce((n, r) => n + (r.count ?? 0), 0);
    assert.ok(asked <= 5000 + 100 * 12, `records asked: ${asked}`);
  });

  it('reads one answer at a time with a single lane, as before', async () => {
    const list = new LiveList({ count: 3000 });
    const store = new MemoryStore();
    const key = distant(list);
    const result = await walkByKey({ store, ...key, spec, owner, count: 100, lanes: 1 });
    assert.equal(result.finished, true);
    assert.equal(key.most(), 1);
    assert.equal(storedIds(store).length, 3000);
  });

  it('begins at the head, then reads what lies between the settled mark and it in ranges at once', async () => {
    const { list, store, now } = await fallenBehind(200, 4000);
    // No head read: the head answer tells where the stretch ends.
    const key = distant(list);
    const tail = await walkByKey({
      store,
      fetchKeyPage: key.fetchKeyPage,
      spec,
      owner,
      count: 100,
      lanes: 5,
      headFirst: true,
      now,
    });
    assert.equal(tail.finished, true);
    assert.equal(key.requests[0]?.order, 'desc');
    assert.ok(key.most() >= 4, `requests in flight at once: ${key.most()}`);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    assert.ok(cursorsAscend(store));
  });

  it('leaves no hole among sparse rawIds and records that arrive while it reads', async () => {
    let n = 0;
    const { list, store, now } = await fallenBehind(100, 3000, () => 1 + (n++ % 5) * 3);
    const key = distant(list);
    let arrivals = 0;
    const arriving: FetchKeyPage = async (s, q) => {
      if (++arrivals % 5 === 0) list.add(7);
      return key.fetchKeyPage(s, q);
    };
    const tail = await walkByKey({
      store,
      fetchKeyPage: arriving,
      fetchKeyHead: key.fetchKeyHead,
      spec,
      owner,
      count: 100,
      lanes: 4,
      now,
    });
    assert.equal(tail.finished, true);
    assert.ok(key.most() >= 3, `requests in flight at once: ${key.most()}`);
    // What arrived after the last request is the next tail's; everything below it is stored.
    const stored = new Set(storedIds(store));
    const missing = list.records.filter((tx) => tx.rawId <= tail.watermark! && !stored.has(tx.rawId));
    assert.deepEqual(missing, []);
  });

  it('asks where the head is again when records kept arriving while the window read', async () => {
    const { list, store, now } = await fallenBehind(100, 3000);
    const key = distant(list);
    let heads = 0;
    let requests = 0;
    const tail = await walkByKey({
      store,
      // Thirty answers' worth arrive while the first stretch is read.
      fetchKeyPage: async (s, q) => {
        if (++requests === 10) list.add(3000);
        return key.fetchKeyPage(s, q);
      },
      fetchKeyHead: async (s) => {
        heads++;
        return key.fetchKeyHead(s);
      },
      spec,
      owner,
      count: 100,
      lanes: 6,
      now,
    });
    assert.equal(tail.finished, true);
    assert.equal(heads, 2, 'the head asked once for each stretch');
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });

  it('reads no further ahead of its commits than twice its lanes in ranges: memory stays bounded', async () => {
    const { list, store, now } = await fallenBehind(100, 20_000);
    const key = distant(list);
    // Commits far slower than the answers: the window waits for the walk rather than read on.
    let aheadMost = 0;
    const commitPage = store.commitPage.bind(store);
    store.commitPage = async (commit) => {
      const committedTo = store.commits.at(-1)?.walk?.cursor ?? 100;
      const readTo = Math.max(...key.requests.map((r) => r.cursor));
      aheadMost = Math.max(aheadMost, readTo - committedTo);
      await new Promise((resolve) => setTimeout(resolve, 30));
      return commitPage(commit);
    };
    const tail = await walkByKey({ store, ...key, spec, owner, count: 100, lanes: 2, now });
    assert.equal(tail.finished, true);
    assert.equal(storedIds(store).length, 20_100);
    // Two lanes: at most four ranges of eight answers read ahead, and the answers of a commit.
    assert.ok(aheadMost <= (2 * 2 + 1) * 8 * 100 + 8 * 100, `read ahead of the commits: ${aheadMost} rawIds`);
  });

  it('fails on a lost answer with only what lies below it committed, and the next run stores the rest', async () => {
    const { list, store, now } = await fallenBehind(100, 4000);
    // An answer in the middle of the stretch fails every time it is asked.
    const failing = distant(list, { failAt: (cursor) => cursor >= 2000 && cursor < 2100 });
    await assert.rejects(
      walkByKey({ store, ...failing, spec, owner, count: 100, lanes: 6, now }),
      /answer after 2\d{3} lost/,
    );
    assert.ok(failing.most() >= 4);
    const stored = storedIds(store);
    // Answers above the lost one were read, but a commit never passes it.
    assert.ok(Math.max(...stored) <= 2100, `highest stored: ${Math.max(...stored)}`);
    assert.deepEqual(
      stored,
      list.records.filter((tx) => tx.rawId <= Math.max(...stored)).map((tx) => tx.rawId),
      'what is stored is the list up to the checkpoint, without a hole',
    );
    const again = distant(list);
    const rerun = await walkByKey({ store, ...again, spec, owner, count: 100, lanes: 6, now });
    assert.equal(rerun.finished, true);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });
});
