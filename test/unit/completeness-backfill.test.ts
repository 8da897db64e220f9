import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fetchRange,
  pageRepairTasks,
  planBackfill,
  type RangeTask,
  rangeStarts,
} from '../../src/sync/backfill/page-range.js';
import { checkBackfill } from '../../src/sync/backfill/run-check.js';
import { oneEveryThirdRequest, readRangesAtOnce } from './ranges-at-once.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

/** Runs tasks last-first, the worst order for a list that grows while it is read. */
async function runTasks(store: MemoryStore, list: LiveList, backfillId: string, tasks: RangeTask[]) {
  for (const task of [...tasks].reverse()) {
    await fetchRange({ store, fetchPage: list.fetchPage, spec: {}, backfillId, task });
  }
}

describe('parallel backfill', () => {
  it('ranges fetched out of order while records arrive miss records, and the check finds and repairs every gap', async () => {
    const list = new LiveList({ count: 300 });
    const rows = new MemoryStore();
    const store = rows;
    const plan = await planBackfill({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      id: 'b1',
      pagesPerRange: 5,
    });
    assert.ok(plan);
    assert.equal(plan.run.headRawId, 300);
    list.afterServe = () => list.add(1); // one arrival after every request
    await runTasks(store, list, 'b1', plan.tasks);

    const truthUpToHead = list.records.map((tx) => tx.rawId).filter((id) => id <= 300);
    const missed = truthUpToHead.filter((id) => !rows.rows.has(id));
    assert.ok(missed.length > 0, 'out-of-order ranges skipped records');

    let round = 0;
    for (;;) {
      const outcome = await checkBackfill({
        store,
        syncStore: rows,
        spec: {},
        backfillId: 'b1',
        round,
      });
      if (outcome.status === 'done') break;
      assert.equal(outcome.status, 'repair');
      if (outcome.status !== 'repair') return;
      assert.ok(outcome.gaps.length > 0);
      await runTasks(store, list, 'b1', await pageRepairTasks(store, outcome));
      round++;
    }
    assert.ok(round >= 1 && round <= 2, `repaired in ${round} round(s)`);
    const stored = new Set(storedIds(rows));
    assert.deepEqual(
      truthUpToHead.filter((id) => !stored.has(id)),
      [],
    );
    assert.equal(rows.streams.get('txs')?.watermark, 300);
  });

  it('ranges read at once while records arrive each read on past where the next one began: no gap for the check', async () => {
    // Pages drift while the ranges read: a range that stops at its last page leaves the records
    // that drifted onto it after the next range read its first page to neither.
    const alone = await readRangesAtOnce({ id: 'r', arrive: oneEveryThirdRequest() });
    assert.equal(alone.outcome.status, 'repair');
    const shared = rangeStarts();
    const together = await readRangesAtOnce({
      id: 'r',
      arrive: oneEveryThirdRequest(),
      startsOf: () => shared,
    });
    assert.deepEqual(together.outcome, { status: 'done', watermark: 300 });
  });

  it('a range whose pages drift faster than it reads them reads on at most as many pages again, and leaves the rest to the check', async () => {
    const starts = rangeStarts();
    const { list, tasks, outcome } = await readRangesAtOnce({
      id: 's',
      // Three records a request, for the first 2,000 requests: a range chasing the next one's
      // first page would read until then.
      arrive: (grown) => {
        if (grown.served.length <= 2000) grown.add(3);
      },
      startsOf: () => starts,
    });
    // Each closed range reads its five pages and five more at most; the open last one runs on to
    // the end of the list, which grows by the pages the others let pass.
    const closed = tasks.filter((task) => task.toPage !== null).length;
    assert.ok(list.served.length < 1 + closed * 10 + 200, `${list.served.length} pages`);
    assert.equal(outcome.status, 'repair');
  });

  it('a run whose gaps cannot be closed fails after its rounds and never moves the watermark', async () => {
    const list = new LiveList({ count: 50 });
    const rows = new MemoryStore();
    const store = rows;
    const plan = await planBackfill({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      id: 'b2',
      pagesPerRange: 2,
    });
    assert.ok(plan);
    // Only the newest range is ever fetched.
    await fetchRange({ store, fetchPage: list.fetchPage, spec: {}, backfillId: 'b2', task: plan.tasks[0]! });
    const outcome = await checkBackfill({
      store,
      syncStore: rows,
      spec: {},
      backfillId: 'b2',
      round: 3,
      maxRounds: 3,
    });
    assert.equal(outcome.status, 'failed');
    assert.equal(rows.streams.get('txs')?.watermark ?? null, null);
  });

  it('a second plan while one runs is refused', async () => {
    const list = new LiveList({ count: 20 });
    const store = new MemoryStore();
    assert.ok(await planBackfill({ store, fetchPage: list.fetchPage, spec: {}, id: 'a', pagesPerRange: 1 }));
    assert.equal(
      await planBackfill({ store, fetchPage: list.fetchPage, spec: {}, id: 'b', pagesPerRange: 1 }),
      null,
    );
  });

  it('the last range runs on to the end of a list that grew after planning', async () => {
    const list = new LiveList({ count: 40 });
    const rows = new MemoryStore();
    const store = rows;
    const plan = await planBackfill({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      id: 'c',
      pagesPerRange: 2,
    });
    assert.ok(plan);
    assert.equal(plan.tasks.at(-1)?.toPage, null);
    list.add(25); // the bottom records move to pages 5..7
    await runTasks(store, list, 'c', plan.tasks.slice(-1));
    assert.ok(rows.rows.has(1), 'the oldest record was reached');
  });

  it('a range asks an empty page before the last again, and fails on one that stays empty', async () => {
    const list = new LiveList({ count: 60 });
    const store = new MemoryStore();
    const task: RangeTask = { fromPage: 1, toPage: null, stopBelowRawId: null };
    const emptyRetry = { retries: 2, delayMs: 1 };
    // Empty once, as behind a cache: asked again, and the range reads on.
    list.override = (page, attempt) =>
      page === 3 && attempt === 1 ? { currentPage: 3, totalPages: 6, txs: [], rejected: [] } : undefined;
    await fetchRange({ store, fetchPage: list.fetchPage, spec: {}, backfillId: 'e', task, emptyRetry });
    assert.deepEqual(
      list.served.filter((page) => page === 3),
      [3, 3],
    );
    assert.equal(store.rows.size, 60);
    // Empty every time: the range fails as malformed after its tries, what it read before kept.
    const broken = new LiveList({ count: 60 });
    const kept = new MemoryStore();
    broken.override = (page) =>
      page === 4 ? { currentPage: 4, totalPages: 6, txs: [], rejected: [] } : undefined;
    await assert.rejects(
      fetchRange({ store: kept, fetchPage: broken.fetchPage, spec: {}, backfillId: 'f', task, emptyRetry }),
      /page 4.*empty page before the last/,
    );
    assert.equal(broken.served.filter((page) => page === 4).length, 3);
    assert.equal(kept.rows.size, 30);
  });

  it('a new run after one that gave up fetches only what the old proofs do not cover', async () => {
    const list = new LiveList({ count: 200 });
    const rows = new MemoryStore();
    const store = rows;
    const first = await planBackfill({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      id: 'old',
      pagesPerRange: 5,
    });
    assert.ok(first);
    await runTasks(store, list, 'old', first.tasks.slice(0, 2)); // pages 1..10 only
    await store.recordCheck({ id: 'old', round: 5, gaps: [], status: 'failed' });
    const servedBefore = list.served.length;
    const second = await planBackfill({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      id: 'new',
      pagesPerRange: 5,
    });
    assert.ok(second);
    assert.equal(second.tasks.length, 1, 'one walk over the unproven older half');
    assert.ok((second.tasks[0]?.fromPage ?? 0) >= 10);
    await runTasks(store, list, 'new', second.tasks);
    const outcome = await checkBackfill({
      store,
      syncStore: rows,
      spec: {},
      backfillId: 'new',
      round: 0,
    });
    assert.equal(outcome.status, 'done');
    assert.ok(list.served.length - servedBefore <= 13, `fetched ${list.served.length - servedBefore} pages`);
  });
});
