import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeRanges, type RawIdRange } from '../../src/domain/raw-id-ranges.js';
import {
  fetchRange,
  pageRepairTasks,
  planBackfill,
  type RangeTask,
} from '../../src/sync/backfill/page-range.js';
import { checkBackfill } from '../../src/sync/backfill/run-check.js';
import type { BackfillStore, RangePage } from '../../src/sync/ports/backfill-store.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

/** The in-memory backfill store, committing several pages per transaction, checking every commit. */
class BatchingStore implements BackfillStore {
  /** Pages of each transaction, in commit order. */
  readonly transactions: number[][] = [];
  /** Transactions running at the same time, at most. */
  overlap = 0;
  private active = 0;
  /** Makes the transaction of this ordinal (0-based) fail, once. */
  failTransaction: number | null = null;
  commitDelayMs = 0;
  constructor(
    readonly rows: MemoryStore,
    readonly truth: LiveList,
  ) {}
  /** The global list's proven-range rows. */
  get ranges(): RawIdRange[] {
    return this.rows.proven.get('txs') ?? [];
  }
  startRun = (run: Parameters<BackfillStore['startRun']>[0]) => this.rows.startRun(run);
  getRun = (id: string) => this.rows.getRun(id);
  streamStarted = (key: string) => this.rows.streamStarted(key);
  runningRun = (key: string) => this.rows.runningRun(key);
  provenRanges = (key: string) => this.rows.provenRanges(key);
  compactProvenRanges = (key: string) => this.rows.compactProvenRanges(key);
  storedAbove = (rawId: number) => this.rows.storedAbove(rawId);
  readAhead = async () => null;
  recordCheck = (input: Parameters<BackfillStore['recordCheck']>[0]) => this.rows.recordCheck(input);
  async commitRangePages(input: {
    key: string;
    backfillId: string;
    pages: RangePage[];
    proven: RawIdRange[];
  }) {
    this.active++;
    this.overlap = Math.max(this.overlap, this.active);
    try {
      if (this.commitDelayMs > 0) await new Promise((r) => setTimeout(r, this.commitDelayMs));
      if (this.failTransaction === this.transactions.length) {
        this.failTransaction = null;
        throw new Error('connection lost mid-commit');
      }
      this.transactions.push(input.pages.map((p) => p.page));
      const counts = await this.rows.commitRangePages(input);
      this.assertProofsHold();
      return counts;
    } finally {
      this.active--;
    }
  }
  /** Every record of the list that lies in a proven range is stored. */
  assertProofsHold(): void {
    const proven = mergeRanges(this.ranges);
    const unstored = this.truth.records
      .map((tx) => tx.rawId)
      .filter((id) => proven.some((r) => r.lo <= id && id <= r.hi) && !this.rows.rows.has(id));
    assert.deepEqual(unstored, [], 'a range was proven without its records');
  }
}

async function checkUntilDone(store: BatchingStore, list: LiveList, rows: MemoryStore, id: string) {
  for (let round = 0; ; round++) {
    const outcome = await checkBackfill({
      store,
      syncStore: rows,
      spec: {},
      backfillId: id,
      round,
    });
    if (outcome.status === 'done') return round;
    assert.equal(outcome.status, 'repair');
    if (outcome.status !== 'repair') throw new Error('unreachable');
    for (const task of [...(await pageRepairTasks(store, outcome))].reverse()) {
      await fetchRange({ store, fetchPage: list.fetchPage, spec: {}, backfillId: id, task });
    }
  }
}

describe('parallel backfill committing several pages at a time', () => {
  it('commits a range in a few transactions, and still finds and repairs every gap left by arrivals', async () => {
    const list = new LiveList({ count: 600 });
    const rows = new MemoryStore();
    const store = new BatchingStore(rows, list);
    const plan = await planBackfill({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      id: 'b',
      pagesPerRange: 20,
    });
    assert.ok(plan);
    list.afterServe = () => list.add(1);
    for (const task of [...plan.tasks].reverse()) {
      await fetchRange({
        store,
        fetchPage: list.fetchPage,
        spec: {},
        backfillId: 'b',
        task,
        pagesPerCommit: 8,
      });
    }
    const pages = store.transactions.flat().length;
    assert.ok(
      store.transactions.length * 4 <= pages,
      `${store.transactions.length} transactions for ${pages} pages`,
    );
    assert.ok(store.transactions.every((t) => t.length <= 8));
    await checkUntilDone(store, list, rows, 'b');
    const stored = new Set(storedIds(rows));
    assert.deepEqual(
      list.records.map((tx) => tx.rawId).filter((id) => id <= 600 && !stored.has(id)),
      [],
    );
    assert.equal(rows.streams.get('txs')?.watermark, 600);
  });

  it('fetches the next pages while a commit runs, but never runs two commits of a range at once', async () => {
    const list = new LiveList({ count: 400 });
    const store = new BatchingStore(new MemoryStore(), list);
    store.commitDelayMs = 20;
    list.jitterMs = 2;
    const task: RangeTask = { fromPage: 1, toPage: null, stopBelowRawId: null };
    const result = await fetchRange({
      store,
      fetchPage: list.fetchPage,
      spec: {},
      backfillId: 'o',
      task,
      pagesPerCommit: 4,
      commitLingerMs: 0,
    });
    assert.equal(result.pages, 40);
    assert.equal(store.overlap, 1);
    assert.deepEqual(
      store.transactions.flat(),
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    assert.ok(store.transactions.length < 40, `${store.transactions.length} transactions`);
    assert.equal(store.rows.rows.size, 400);
  });

  it('a failed fetch keeps the pages fetched before it, and the retry resumes after them', async () => {
    const list = new LiveList({ count: 300 });
    const store = new BatchingStore(new MemoryStore(), list);
    let failed = false;
    const failing = async (spec: object, page: number) => {
      if (page === 13 && !failed) {
        failed = true;
        throw new Error('socket hang up');
      }
      return list.fetchPage(spec, page);
    };
    let saved: RangeTask = { fromPage: 1, toPage: null, stopBelowRawId: null };
    const run = () =>
      fetchRange({
        store,
        fetchPage: failing,
        spec: {},
        backfillId: 'f',
        task: saved,
        pagesPerCommit: 16,
        onProgress: async (resume) => {
          saved = resume;
        },
      });
    await assert.rejects(run(), /socket hang up/);
    assert.deepEqual(
      store.transactions.flat(),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    assert.equal(saved.fromPage, 13);
    list.add(7); // arrivals before the retry
    await run();
    assert.equal(list.served.filter((p) => p <= 12).length, 12, 'no committed page fetched again');
    const proven = mergeRanges(store.ranges).map((r) => ({ lo: r.lo, hi: r.hi }));
    assert.deepEqual(proven, [{ lo: 0, hi: 300 }]);
    store.assertProofsHold();
  });

  it('a failed commit loses no proof: the retry resumes after the last committed pages', async () => {
    const list = new LiveList({ count: 300 });
    const store = new BatchingStore(new MemoryStore(), list);
    store.failTransaction = 1;
    let saved: RangeTask = { fromPage: 1, toPage: null, stopBelowRawId: null };
    const run = () =>
      fetchRange({
        store,
        fetchPage: list.fetchPage,
        spec: {},
        backfillId: 'c',
        task: saved,
        pagesPerCommit: 5,
        commitLingerMs: 1_000,
        onProgress: async (resume) => {
          saved = resume;
        },
      });
    await assert.rejects(run(), /connection lost/);
    assert.deepEqual(store.transactions, [[1, 2, 3, 4, 5]]);
    assert.equal(saved.fromPage, 6);
    assert.equal(saved.previousLow, 251);
    list.afterServe = () => list.add(1);
    await run();
    const proven = mergeRanges(store.ranges);
    assert.equal(proven.length, 1);
    assert.equal(proven[0]?.lo, 0);
    assert.ok((proven[0]?.hi ?? 0) >= 300);
    store.assertProofsHold();
  });
  it('a failed fetch is reported as such even when the pages before it cannot be committed', async () => {
    const list = new LiveList({ count: 100 });
    const store = new BatchingStore(new MemoryStore(), list);
    store.failTransaction = 0;
    const failing = async (spec: object, page: number) => {
      if (page === 5) throw new Error('429 too many requests');
      return list.fetchPage(spec, page);
    };
    const saved: RangeTask[] = [];
    const task: RangeTask = { fromPage: 1, toPage: null, stopBelowRawId: null };
    await assert.rejects(
      fetchRange({
        store,
        fetchPage: failing,
        spec: {},
        backfillId: 'e',
        task,
        onProgress: async (resume) => {
          saved.push(resume);
        },
      }),
      /429 too many requests/,
    );
    assert.deepEqual(store.transactions, []);
    assert.deepEqual(saved, [], 'the resume point stays where nothing was committed');
    await fetchRange({ store, fetchPage: list.fetchPage, spec: {}, backfillId: 'e', task });
    assert.equal(store.rows.rows.size, 100);
    store.assertProofsHold();
  });
});
