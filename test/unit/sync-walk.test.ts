import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asPageCheckpoint } from '../../src/domain/checkpoints.js';
import { lastPageOf } from '../../src/domain/commit-pages.js';
import { linkPages, pageRawIds } from '../../src/domain/page-links.js';
import { MalformedResponseError } from '../../src/errors.js';
import { syncByPage } from '../../src/sync/backfill/page-sync.js';
import { REPAIR_FLOOR } from '../../src/sync/ports/backfill-store.js';
import { walkStream } from '../../src/sync/walk/walk-stream.js';
import { withSeed } from '../helpers/seed.js';
import { LiveList, MemoryStore, makeTx, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'test-runner';
// These tests follow the walk's paging, so records settle at once (`settleMs: 0`); the settling
// window has tests of its own (sync-settle.test.ts, sync-late-arrivals.test.ts).
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('walkStream: backfill', () => {
  it('stores every record of a 95-record list and sets the watermark to the newest', async () => {
    const list = new LiveList({ count: 95 });
    const store = new MemoryStore();
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 4,
    });
    assert.deepEqual(storedIds(store), range(1, 95));
    assert.equal(result.finished, true);
    assert.equal(result.mode, 'backfill');
    assert.equal(result.watermark, 95);
    const stream = store.streams.get('txs');
    assert.equal(stream?.walk, null);
    assert.equal(stream?.watermark, 95);
    assert.equal(stream?.owner, null, 'lease released');
    const committed = store.commits.map(lastPageOf);
    assert.deepEqual(
      committed,
      [...committed].sort((a, b) => a - b),
      'pages committed in ascending order',
    );
    assert.equal(committed.at(-1), 10);
  });

  it('resumes from the checkpoint after a crash, without refetching committed pages', async () => {
    const list = new LiveList({ count: 95 });
    const store = new MemoryStore();
    store.failCommitAtPage = 4;
    await assert.rejects(
      walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner, concurrency: 1 }),
      /killed/,
    );
    const stream = store.streams.get('txs');
    assert.equal(asPageCheckpoint(stream?.walk)?.nextPage, 4);
    assert.equal(stream?.watermark, null, 'the watermark moves only when a walk finishes');
    assert.deepEqual(storedIds(store), range(66, 95));

    list.served.length = 0;
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 1,
    });
    assert.equal(list.served[0], 4, 'the second run starts at the checkpoint');
    assert.deepEqual(storedIds(store), range(1, 95));
    assert.equal(result.watermark, 95);
  });

  it('follows totalPages as it grows while records arrive during the walk', async () => {
    const list = new LiveList({ count: 50 });
    list.afterServe = () => list.add(7);
    const store = new MemoryStore();
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 1,
    });
    const ids = storedIds(store);
    for (const id of range(1, 50)) assert.ok(ids.includes(id), `record ${id} stored`);
    assert.ok(result.pages > 5, `walked past the first totalPages (${result.pages} pages)`);
    assert.equal(result.watermark, 50, 'the watermark is the head seen when the walk began');
  });

  it('does not stop on a short page before totalPages', async () => {
    const list = new LiveList({ count: 60 });
    list.override = (page) => {
      if (page !== 3) return undefined;
      const full = list.page(3);
      return { ...full, txs: full.txs.slice(0, 4) };
    };
    const store = new MemoryStore();
    await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner, concurrency: 1 });
    assert.ok(list.served.includes(6), 'page 6 fetched');
    assert.ok(store.rows.has(1), 'the oldest record stored');
  });

  it('fetches an empty page before totalPages again and goes on when it fills', async () => {
    const list = new LiveList({ count: 60 });
    list.override = (page, attempt) =>
      page === 3 && attempt <= 2 ? { ...list.page(3), txs: [] } : undefined;
    const store = new MemoryStore();
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 1,
      emptyPageDelayMs: 1,
    });
    assert.equal(list.served.filter((p) => p === 3).length, 3);
    assert.deepEqual(storedIds(store), range(1, 60));
    assert.equal(result.finished, true);
  });

  it('fails with the checkpoint intact when a page before totalPages stays empty', async () => {
    const list = new LiveList({ count: 60 });
    list.override = (page) => (page === 3 ? { ...list.page(3), txs: [] } : undefined);
    const store = new MemoryStore();
    await assert.rejects(
      walkStream({
        settleMs: 0,
        store,
        fetchPage: list.fetchPage,
        spec,
        owner,
        concurrency: 2,
        emptyPageDelayMs: 1,
      }),
      MalformedResponseError,
    );
    const stream = store.streams.get('txs');
    assert.equal(asPageCheckpoint(stream?.walk)?.nextPage, 3);
    assert.match(stream?.lastError ?? '', /page 3/);
    assert.equal(stream?.owner, null, 'lease released after the failure');
  });

  it('fails with the checkpoint intact when the service keeps failing', async () => {
    const list = new LiveList({ count: 60 });
    const store = new MemoryStore();
    const fetchPage = async (s: object, page: number) => {
      if (page === 4) throw new Error('HTTP 503');
      return list.fetchPage(s, page);
    };
    await assert.rejects(walkStream({ settleMs: 0, store, fetchPage, spec, owner, concurrency: 4 }), /503/);
    assert.equal(asPageCheckpoint(store.streams.get('txs')?.walk)?.nextPage, 4);
    assert.deepEqual(storedIds(store), range(31, 60));
  });

  it('commits the valid records of a page with malformed ones set aside', async () => {
    const list = new LiveList({ count: 25 });
    list.override = (page) => {
      if (page !== 2) return undefined;
      const full = list.page(2);
      return {
        ...full,
        txs: full.txs.filter((tx) => tx.rawId !== 12),
        rejected: [{ reason: 'amount is not decimal digits', raw: '{"rawId":12}', rawId: 12 }],
      };
    };
    const store = new MemoryStore();
    const result = await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
    assert.equal(store.rows.size, 24);
    assert.equal(store.rejected.length, 1);
    assert.equal(store.rejected[0]?.page, 2);
    assert.equal(result.counts.rejected, 1);
  });
});

describe('walkStream: tail', () => {
  it('walks from page 1 only down to the watermark and moves it to the new head', async () => {
    const list = new LiveList({ count: 200 });
    const store = new MemoryStore();
    await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
    list.add(15);
    list.served.length = 0;
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 1,
    });
    assert.equal(result.mode, 'tail');
    assert.deepEqual(list.served, [1, 2], 'stops at the page holding the watermark');
    assert.equal(result.watermark, 215);
    assert.deepEqual(storedIds(store), range(1, 215));
  });

  it('writes nothing new when the service has not changed', async () => {
    const list = new LiveList({ count: 40 });
    const store = new MemoryStore();
    await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
    const result = await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
    assert.equal(result.counts.inserted, 0);
    assert.equal(result.counts.updated, 0);
    assert.equal(result.pages, 1);
  });

  it('re-walks everything with full', async () => {
    const list = new LiveList({ count: 40 });
    const store = new MemoryStore();
    await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      full: true,
    });
    assert.equal(result.mode, 'backfill');
    assert.equal(result.pages, 4);
  });

  it('completes an empty stream and later picks up its first records', async () => {
    const list = new LiveList({ count: 0 });
    const store = new MemoryStore();
    const first = await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
    assert.equal(first.finished, true);
    list.add(3);
    const second = await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner });
    assert.equal(second.mode, 'tail');
    assert.deepEqual(storedIds(store), [1, 2, 3]);
  });

  it('stops after the page in flight when the signal aborts, checkpoint committed', async () => {
    const list = new LiveList({ count: 100 });
    const store = new MemoryStore();
    const controller = new AbortController();
    const result = await walkStream({
      settleMs: 0,
      store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 1,
      signal: controller.signal,
      onPage: (event) => {
        if (event.page === 3) controller.abort();
      },
    });
    assert.equal(result.finished, false);
    assert.ok(result.pages >= 3 && result.pages <= 4, `stopped right after page 3 (${result.pages} pages)`);
    assert.equal(
      asPageCheckpoint(store.streams.get('txs')?.walk)?.nextPage,
      result.pages + 1,
      'checkpoint after the last page',
    );
    assert.equal(store.rows.size, result.pages * 10);
  });
});

describe('walkStream over a list that shifts while pages are fetched in parallel', () => {
  for (const [name, holes] of [
    ['consecutive rawIds', false],
    ['rawIds with holes', true],
  ] as const) {
    it(`never skips a record (${name})`, () =>
      withSeed(async (rng) => {
        const step = holes ? () => rng.int(1, 3) : () => 1;
        for (let round = 0; round < 15; round++) {
          const list = new LiveList({ count: 300, step });
          const before = list.records.map((tx) => tx.rawId);
          list.jitterMs = 4;
          list.afterServe = () => list.add(rng.int(0, 3));
          const store = new MemoryStore();
          await walkStream({ settleMs: 0, store, fetchPage: list.fetchPage, spec, owner, concurrency: 6 });
          const missing = before.filter((id) => !store.rows.has(id));
          assert.deepEqual(missing, [], `round ${round}: records skipped`);
        }
      }));
  }

  it('never skips a record when a first backfill reads its pages in lanes while records arrive', () =>
    withSeed(async (rng) => {
      for (let round = 0; round < 5; round++) {
        const list = new LiveList({ count: 1500, step: () => rng.int(1, 2) });
        const before = list.records.map((tx) => tx.rawId);
        list.jitterMs = 3;
        list.afterServe = () => list.add(rng.int(0, 2));
        const store = new MemoryStore();
        store.commitDelayMs = () => rng.int(0, 12);
        const result = await syncByPage({
          settleMs: 0,
          store,
          backfills: store,
          fetchPage: list.fetchPage,
          spec,
          owner,
          concurrency: 6,
          lanes: 4,
          pagesPerRange: 8,
        });
        const missing = before.filter((id) => !store.rows.has(id));
        assert.deepEqual(missing, [], `round ${round}: records skipped`);
        assert.ok(
          store.runs.size === 1 && [...store.runs.values()][0]?.status === 'done',
          'read in lanes, proven',
        );
        const stream = store.streams.get('txs');
        assert.deepEqual([stream?.walk, result.finished], [null, true]);
        assert.ok(
          (stream?.watermark ?? 0) >= Math.max(...before),
          'the watermark reaches the head it began with',
        );
      }
    }));

  it('resumes a first backfill in lanes from its proofs when a range fails while other lanes got in', async () => {
    const list = new LiveList({ count: 1500 });
    const store = new MemoryStore();
    // The range holding page 60 takes long and then fails; other lanes commit meanwhile.
    const commit = store.commitRangePages.bind(store);
    store.commitRangePages = async (c) => {
      if (c.pages.some((p) => p.page === 60)) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        throw new Error('process killed');
      }
      return commit(c);
    };
    const input = {
      store,
      backfills: store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 4,
      lanes: 3,
    };
    const sync = (over: object = {}) => syncByPage({ settleMs: 0, ...input, pagesPerRange: 8, ...over });
    await assert.rejects(sync(), /killed/);
    assert.ok(storedIds(store).includes(1500 - 700), 'a range above the failed one was written');
    assert.ok(!storedIds(store).includes(1500 - 600), 'the failed range was not');
    assert.equal(store.streams.get('txs')?.watermark ?? null, null, 'no watermark past the gap');
    store.commitRangePages = commit;
    list.served.length = 0;
    const result = await sync({ owner: 'another-run' });
    assert.ok(
      list.served.length < 100,
      `the next run reads the gap, not the list (${list.served.length} pages)`,
    );
    assert.deepEqual(storedIds(store), range(1, 1500));
    assert.equal(result.watermark, 1500);
  });

  it('reads the whole list again in lanes with full, on its own proofs, and ends at the head it read', async () => {
    const list = new LiveList({ count: 1500 });
    const store = new MemoryStore();
    const input = {
      settleMs: 0,
      store,
      backfills: store,
      fetchPage: list.fetchPage,
      spec,
      owner,
      concurrency: 4,
    };
    const sync = (over: object = {}) => syncByPage({ ...input, lanes: 3, pagesPerRange: 8, ...over });
    await sync();
    // A phantom record once moved the watermark past the head; a record changed in the service.
    const stream = store.streams.get('txs')!;
    stream.watermark = 5000;
    list.records[699] = { ...list.records[699]!, status: 'packaged' };
    list.add(30);
    list.served.length = 0;
    const result = await sync({ full: true });
    assert.deepEqual([result.finished, result.mode], [true, 'backfill']);
    assert.deepEqual(storedIds(store), range(1, 1530));
    assert.equal(store.rows.get(700)?.status, 'packaged', 'the changed record read again');
    const repairs = [...store.runs.values()].filter((r) => r.floor === REPAIR_FLOOR);
    assert.deepEqual(
      repairs.map((r) => [r.headRawId, r.status]),
      [[1530, 'done']],
    );
    assert.deepEqual([stream.watermark, stream.walk], [1530, null], 'the head it read, below the phantom');
    // Every page once (153), page 1 for the run's head and the tail's pages after it.
    assert.ok(list.served.length >= 153 && list.served.length <= 160, `${list.served.length} pages`);
  });

  it('stops a first backfill in lanes on its signal with what it read committed, and the next run ends it', async () => {
    const list = new LiveList({ count: 1500 });
    const store = new MemoryStore();
    const stop = new AbortController();
    const fetchPage: typeof list.fetchPage = async (s, page) => {
      if (list.served.length === 40) stop.abort();
      return list.fetchPage(s, page);
    };
    const input = {
      settleMs: 0,
      store,
      backfills: store,
      spec,
      owner,
      concurrency: 4,
      lanes: 3,
      pagesPerRange: 8,
    };
    const stopped = await syncByPage({ ...input, fetchPage, signal: stop.signal });
    assert.equal(stopped.finished, false);
    const kept = storedIds(store).length;
    assert.ok(kept >= 300 && kept < 1500, `what the lanes read is stored (${kept})`);
    assert.equal(store.streams.get('txs')?.owner ?? null, null, 'the lease is released');
    const result = await syncByPage({ ...input, fetchPage: list.fetchPage });
    assert.equal(result.finished, true);
    assert.deepEqual(storedIds(store), range(1, 1500));
  });

  it('gives the upper pages of a range under way to an idle lane, so the last range is not read one page at a time', async () => {
    // 150 pages in ranges of 50 and two lanes: the third range would be read alone, page by page.
    const list = new LiveList({ count: 1500 });
    const store = new MemoryStore();
    let inFlight = 0;
    let alone = 0;
    const fetchPage: typeof list.fetchPage = async (s, page) => {
      inFlight++;
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (inFlight === 1) alone++;
      try {
        return await list.fetchPage(s, page);
      } finally {
        inFlight--;
      }
    };
    const result = await syncByPage({
      settleMs: 0,
      store,
      backfills: store,
      fetchPage,
      spec,
      owner,
      concurrency: 2,
      lanes: 2,
      pagesPerRange: 50,
    });
    assert.equal(result.finished, true);
    assert.deepEqual(storedIds(store), range(1, 1500));
    assert.ok(alone <= 12, `pages read with one lane walking: ${alone} (the last range alone: 50)`);
  });

  it('fetches a page again when it was served before its predecessor with arrivals between', async () => {
    const list = new LiveList({ count: 60 });
    // Page 3 is answered first, then 5 records arrive, then page 2: 5 records fall between them.
    let release: () => void = () => {};
    const page2Gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fetchPage = async (s: object, page: number) => {
      if (page === 2 && list.served.filter((p) => p === 2).length === 0) await page2Gate;
      const answer = await list.fetchPage(s, page);
      if (page === 3 && list.served.filter((p) => p === 3).length === 1) {
        list.add(5);
        release();
      }
      return answer;
    };
    const store = new MemoryStore();
    // Page 1 alone, then a window of two (pages 2 and 3 together).
    const result = await walkStream({ settleMs: 0, store, fetchPage, spec, owner, concurrency: 2 });
    assert.ok(result.refetched >= 1, 'the unproven page was fetched again');
    for (const id of range(1, 60)) assert.ok(store.rows.has(id), `record ${id} stored`);
  });
});

describe('linkPages', () => {
  it('accepts overlap and consecutive joins, and nothing else', () => {
    assert.equal(linkPages(50, [52, 51, 50, 49]), 'overlap');
    assert.equal(linkPages(50, [49, 48]), 'join');
    assert.equal(linkPages(50, [47, 46]), 'unproven');
    assert.equal(linkPages(null, [47]), 'unproven');
    assert.equal(linkPages(50, []), 'unproven');
  });

  it('counts the readable rawIds of rejected records', () => {
    const page = {
      currentPage: 1,
      totalPages: 1,
      txs: [makeTx(9)],
      rejected: [
        { reason: 'bad amount', raw: '{}', rawId: 8 },
        { reason: 'no rawId', raw: '{}' },
      ],
    };
    assert.deepEqual(pageRawIds(page), [9, 8]);
  });
});
