import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { guessKeyAnswer } from '../../src/client/key-answer-guess.js';
import { type HeldRecords, isHeld } from '../../src/domain/commit-pages.js';
import type { KeyAnswerText, LedgerTx, TxKeyPage } from '../../src/domain/model.js';
import { mergeRanges } from '../../src/domain/raw-id-ranges.js';
import {
  fetchKeyRange,
  keyRepairTasks,
  splitKeyRanges,
  taperKeyTasks,
} from '../../src/sync/backfill/key-backfill.js';
import { laneBatchBytes, syncByKey } from '../../src/sync/backfill/key-sync.js';
import { REPAIR_FLOOR } from '../../src/sync/ports/backfill-store.js';
import type { FetchKeyPage, FetchKeyText } from '../../src/sync/ports/fetches.js';
import { LiveList, MemoryStore, storedIds } from './sync-fakes.js';

const spec = {};
const owner = 'key-runner';

/** The list answered by key, ascending after the cursor; `fail(cursor)` may throw instead. */
function byKey(list: LiveList, options: { cap?: number; fail?: (cursor: number) => boolean } = {}) {
  const requests: number[] = [];
  const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count, order }) => {
    await new Promise((resolve) => setImmediate(resolve));
    if (options.fail?.(cursor)) throw new Error(`connection reset after rawId ${cursor}`);
    // The head, newest first (a tail begun at the head asks it with no cursor): counted as -1.
    if (order === 'desc') {
      requests.push(-1);
      const newest = list.records.slice(-(count ?? 100)).reverse();
      return { txs: structuredClone(newest), rejected: [], hasNextPage: list.records.length > newest.length };
    }
    requests.push(cursor);
    const after = list.records.filter((tx) => tx.rawId > cursor).sort((a, b) => a.rawId - b.rawId);
    const served = after.slice(0, Math.min(count ?? 100, options.cap ?? Number.POSITIVE_INFINITY));
    const page: TxKeyPage = {
      txs: structuredClone(served),
      rejected: [],
      hasNextPage: after.length > served.length,
    };
    return page;
  };
  const heads: number[] = [];
  const fetchKeyHead = async () => {
    const head = list.records.at(-1)?.rawId ?? null;
    if (head !== null) heads.push(head);
    return head;
  };
  return { fetchKeyPage, fetchKeyHead, requests, heads };
}

/**
 * `fetch`, each answer 2 ms late, with how many requests were in flight as each was sent (`seen`);
 * `answered(n)` is told after the n-th answer.
 */
function inFlightSeen(fetch: FetchKeyPage, answered?: (answers: number) => void) {
  let inFlight = 0;
  const seen: number[] = [];
  const fetchKeyPage: FetchKeyPage = async (s, q) => {
    seen.push(++inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      return await fetch(s, q);
    } finally {
      inFlight--;
      answered?.(seen.length);
    }
  };
  return { fetchKeyPage, seen };
}

/** `syncByKey` over `store` in lanes of 1,000 rawIds, a hundred records an answer; `more` on top. */
function syncInRanges(
  store: MemoryStore,
  key: Pick<ReturnType<typeof byKey>, 'fetchKeyPage' | 'fetchKeyHead'>,
  more: Partial<Parameters<typeof syncByKey>[0]> = {},
) {
  return syncByKey({
    store,
    backfills: store,
    fetchKeyPage: key.fetchKeyPage,
    fetchKeyHead: key.fetchKeyHead,
    spec,
    owner,
    count: 100,
    lanes: 2,
    rangeWidth: 1000,
    ...more,
  });
}

describe('the ranges of a backfill by key', () => {
  it('split on multiples of the width, the bottom one from the start of the list', () => {
    assert.deepEqual(splitKeyRanges({ lo: 0, hi: 25 }, 10), [
      { after: null, upTo: 10 },
      { after: 10, upTo: 20 },
      { after: 20, upTo: 25 },
    ]);
    // A gap split again lines up with the ranges around it.
    assert.deepEqual(keyRepairTasks([{ lo: 14, hi: 31 }], 10), [
      { after: 13, upTo: 20 },
      { after: 20, upTo: 30 },
      { after: 30, upTo: 31 },
    ]);
  });

  it('as jobs for a fleet, narrow toward the top and cover the same rawIds once', () => {
    const head = 100_050;
    const tasks = taperKeyTasks(keyRepairTasks([{ lo: 0, hi: head }], 1600), 1600, 100);
    // Contiguous, ascending, from the bottom of the list to the head, cursors on whole answers.
    assert.equal(tasks[0]?.after, null);
    assert.equal(tasks.at(-1)?.upTo, head);
    for (let i = 1; i < tasks.length; i++) {
      assert.equal(tasks[i]?.after, tasks[i - 1]?.upTo);
      assert.equal((tasks[i]?.after ?? 0) % 100, 0);
    }
    const widths = tasks.map((t) => t.upTo - (t.after ?? -1));
    // The sixteen jobs a fleet takes first, one to sixteen sixteenths of a range wide, so its
    // lanes end them one after another; then the rest of the ninth range, and whole ranges.
    assert.deepEqual(
      tasks.slice(0, 16).map((t) => t.upTo - (t.after ?? 0)),
      Array.from({ length: 16 }, (_, i) => 100 * (i + 1)),
    );
    assert.deepEqual(tasks[16], { after: 13_600, upTo: 9 * 1600 });
    // Whole ranges below the top sixteen widths' worth, narrowing above to one answer at the top.
    const whole = tasks.slice(17).filter((t) => t.upTo <= head - 16 * 1600);
    assert.ok(whole.length > 20 && whole.every((t) => t.upTo - (t.after ?? -1) >= 1600));
    // Each about a sixteenth of the rawIds above it (whole answers, so up to one more), one answer at the top.
    tasks.forEach((t, i) => {
      const above = head - t.upTo;
      assert.ok(widths[i]! <= Math.min(1601, 1.5 * Math.max(100, above / 16) + 100), `${JSON.stringify(t)}`);
    });
    assert.ok(widths.slice(-8).every((w) => w <= 100));
    assert.ok(tasks.length > keyRepairTasks([{ lo: 0, hi: head }], 1600).length + 16);
    // A short list keeps its one range when the floor is its width.
    assert.deepEqual(taperKeyTasks([{ after: null, upTo: 30 }], 160, 100), [{ after: null, upTo: 30 }]);
  });

  it('a range walk proves every rawId from below it to its top and stores nothing above it', async () => {
    const list = new LiveList({ count: 400, step: () => 3 });
    const key = byKey(list, { cap: 40 });
    const store = new MemoryStore();
    await store.startRun({ id: 'r', key: 'txs', headRawId: 1200, totalPages: 0 });
    const result = await fetchKeyRange({
      store,
      fetchKeyPage: key.fetchKeyPage,
      spec,
      backfillId: 'r',
      task: { after: 299, upTo: 599 },
      count: 100,
    });
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId).filter((id) => id > 299 && id <= 599),
    );
    assert.deepEqual(mergeRanges(await store.provenRanges('txs')), [{ lo: 300, hi: 599 }]);
    // A silent cap of 40 is followed from the last rawId: 100 records in three answers.
    assert.equal(result.pages, 3);
  });
});

describe('the requests of a range walk by key', () => {
  it('ask at the top of a range only for the rawIds left in it', async () => {
    const list = new LiveList({ count: 1000 });
    const counts: number[] = [];
    const key = byKey(list);
    const store = new MemoryStore();
    await store.startRun({ id: 'r', key: 'txs', headRawId: 1000, totalPages: 0 });
    const result = await fetchKeyRange({
      store,
      fetchKeyPage: async (s, q) => {
        counts.push(q.count ?? 100);
        return key.fetchKeyPage(s, q);
      },
      spec,
      backfillId: 'r',
      task: { after: 100, upTo: 350 },
      count: 100,
    });
    // 250 rawIds: two full answers and one of fifty, none reading into the range above.
    assert.deepEqual(counts, [100, 100, 50]);
    assert.equal(result.pages, 3);
    assert.deepEqual(mergeRanges(await store.provenRanges('txs')), [{ lo: 101, hi: 350 }]);
  });

  it('hands its upper part to the caller that asks for it, and proves only what it kept', async () => {
    const list = new LiveList({ count: 1000 });
    const key = byKey(list);
    const store = new MemoryStore();
    await store.startRun({ id: 'r', key: 'txs', headRawId: 1000, totalPages: 0 });
    const asked: Array<{ cursor: number; upTo: number }> = [];
    await fetchKeyRange({
      store,
      fetchKeyPage: key.fetchKeyPage,
      spec,
      backfillId: 'r',
      task: { after: null, upTo: 1000 },
      count: 100,
      split: (at) => {
        asked.push(at);
        return at.cursor === 200 ? 450 : null;
      },
    });
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId).filter((id) => id <= 450),
    );
    assert.deepEqual(mergeRanges(await store.provenRanges('txs')), [{ lo: 0, hi: 450 }]);
    // Asked after each answer that left more: at 100, at 200 (where it gave 451..1000 away), at 300, 400.
    assert.deepEqual(
      asked.map((a) => [a.cursor, a.upTo]),
      [
        [100, 1000],
        [200, 1000],
        [300, 450],
        [400, 450],
      ],
    );
  });
});

describe('a first sync by key in lanes', () => {
  it('keeps as many ranges under way as the lanes say, splitting ranges when too few are left', async () => {
    // One range of 10,000 rawIds over 3,000 records: four lanes all the same.
    const list = new LiveList({ count: 3000 });
    const key = byKey(list);
    const store = new MemoryStore();
    const { fetchKeyPage, seen } = inFlightSeen(key.fetchKeyPage);
    const result = await syncInRanges(store, key, { fetchKeyPage, lanes: () => 4, rangeWidth: 10_000 });
    assert.equal(result.finished, true);
    assert.equal(Math.max(...seen), 4);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    assert.deepEqual(mergeRanges(await store.provenRanges('txs')), [{ lo: 0, hi: 3000 }]);
    // 30 answers, at most one more at each range's top (three splits), and the tail's one.
    assert.ok(key.requests.length <= 34, `${key.requests.length} requests`);
  });

  it('adds lanes as the size it reads grows, and lets lanes go as it shrinks', async () => {
    const list = new LiveList({ count: 6000 });
    const key = byKey(list);
    const store = new MemoryStore();
    let size = 1;
    // Grows to three after a few answers, then back to one.
    const { fetchKeyPage, seen } = inFlightSeen(key.fetchKeyPage, (answers) => {
      if (answers === 5) size = 3;
      if (answers === 30) size = 1;
    });
    await syncInRanges(store, key, { fetchKeyPage, lanes: () => size, rangeWidth: 1000 });
    assert.equal(Math.max(...seen.slice(0, 4)), 1);
    assert.equal(Math.max(...seen), 3);
    // Once the size is back at one, the lanes above it end with their ranges: one at a time.
    assert.equal(Math.max(...seen.slice(-8)), 1);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
  });

  it('walks the ranges below the head at once, then tails what arrived meanwhile', async () => {
    const list = new LiveList({ count: 5000 });
    const key = byKey(list);
    const store = new MemoryStore();
    let arrived = false;
    const fetchKeyPage: FetchKeyPage = async (s, q) => {
      const page = await key.fetchKeyPage(s, q);
      if (!arrived && q.cursor > 2500) {
        arrived = true;
        list.add(150);
      }
      return page;
    };
    const result = await syncInRanges(store, key, { fetchKeyPage, lanes: 3 });
    assert.equal(result.finished, true);
    assert.equal(result.watermark, 5150);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    // 50 answers below the head (the last ranges split for the lanes left idle, on whole answers:
    // none more without holes), then the tail: from the head (5000), two answers for 150.
    assert.equal(key.requests.length, 52);
    assert.deepEqual(mergeRanges(await store.provenRanges('txs')), [{ lo: 0, hi: 5000 }]);
    const run = await store.runningRun('txs');
    assert.equal(run, null, 'the run is done');
    // The ranges overlapped in time: three lanes.
    const firstCursors = key.requests.slice(0, 3).sort((a, b) => a - b);
    assert.deepEqual(firstCursors, [0, 1000, 2000]);
  });

  it('resumes a run a failure stopped: only the stretches its proofs leave are read again', async () => {
    const list = new LiveList({ count: 4000 });
    const store = new MemoryStore();
    let failing = true;
    const key = byKey(list, { fail: (cursor) => failing && cursor === 2600 });
    const run = () => syncInRanges(store, key);
    await assert.rejects(run(), /connection reset after rawId 2600/);
    assert.equal(store.streams.get('txs')?.watermark ?? null, null, 'no watermark past unproven stretches');
    const proven = mergeRanges(await store.provenRanges('txs'));
    assert.ok(
      proven.some((r) => r.lo <= 2000 && r.hi === 2600),
      `the failed range keeps what it proved: ${JSON.stringify(proven)}`,
    );
    failing = false;
    key.requests.length = 0;
    const result = await run();
    assert.equal(result.finished, true);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    assert.ok(
      key.requests.every((cursor) => cursor >= 2600),
      `only unproven stretches: ${key.requests}`,
    );
    assert.equal(key.heads.length, 1, 'the run is taken over, not planned again');
  });

  it('tails only from the head right after the lanes; a run a window later reads their unsettled span again', async () => {
    // Every third rawId missing: gaps that may still fill while the window runs.
    const list = new LiveList({ count: 3000, step: () => 3 });
    const key = byKey(list);
    let clock = 1_000_000;
    const store = new MemoryStore({ now: () => new Date(clock) });
    const input = {
      store,
      backfills: store,
      fetchKeyPage: key.fetchKeyPage,
      fetchKeyHead: key.fetchKeyHead,
      spec,
      owner,
      count: 100,
      lanes: 2,
      rangeWidth: 3000,
      settleMs: 3000,
      now: () => clock,
    };
    await syncByKey(input);
    const head = list.records.at(-1)!.rawId;
    // About 30 answers below the head (one more where a range ends between two records), then one
    // from the head: the span read within the window is not read twice.
    assert.ok(key.requests.length <= 34, `${key.requests.length} requests`);
    assert.equal(key.requests.at(-1), head);
    key.requests.length = 0;
    clock += 10_000;
    await syncByKey(input);
    assert.ok(
      key.requests[0]! < 100,
      `a window later the tail starts at the lowest open gap: ${key.requests[0]}`,
    );
  });

  it('sets a record aside once where two ranges meet, though it carries no rawId', async () => {
    // From rawId 50: the answer that ends the first range (950-1049) reaches into the second.
    const list = new LiveList({ count: 2500, firstRawId: 50 });
    const key = byKey(list);
    const store = new MemoryStore();
    // Each answer sets aside a record listed right after its tenth, without a readable rawId.
    const fetchKeyPage: FetchKeyPage = async (s, q) => {
      const page = await key.fetchKeyPage(s, q);
      const at = page.txs.findIndex((tx) => tx.rawId === 1005);
      if (at >= 0)
        page.rejected.push({ reason: 'amount is not a decimal string', raw: '{"rawId":"x"}', index: at + 1 });
      return page;
    };
    const result = await syncInRanges(store, key, { fetchKeyPage });
    assert.equal(result.counts.rejected, 1);
  });

  /** The list with one record without a readable rawId listed right after rawId `after`. */
  function withKeylessAfter(fetch: FetchKeyPage, after: number): FetchKeyPage {
    return async (s, q) => {
      const page = await fetch(s, q);
      if (q.cursor > after) return page;
      const at = page.txs.findIndex((tx) => tx.rawId > after);
      if (at < 0 && page.txs.at(-1)?.rawId !== after) return page;
      page.rejected.push({
        reason: 'no rawId',
        raw: '{"ledgerHash":"0xk"}',
        index: at < 0 ? page.txs.length : at,
      });
      return page;
    };
  }

  /** The list with one record without a readable rawId whose own rawId is `hidden`, listed where it falls. */
  function withKeylessAt(fetch: FetchKeyPage, hidden: number): FetchKeyPage {
    return async (s, q) => {
      const page = await fetch(s, q);
      const at = page.txs.findIndex((tx) => tx.rawId > hidden);
      if (q.order !== 'desc' && q.cursor < hidden && at >= 0)
        page.rejected.push({ reason: 'no rawId', raw: '{"ledgerHash":"0xk"}', index: at });
      return page;
    };
  }

  for (const [where, count, after] of [
    ['the walk', 300, 200],
    ['a range', 2500, 200],
    ['two ranges', 2500, 1000],
  ] as const) {
    it(`sets a record without a rawId aside once where two answers of ${where} meet`, async () => {
      // Answers of 100 from rawId 1: one ends at rawId `after`, listing the record last, and the
      // next, asked from `after`, lists it first.
      const list = new LiveList({ count });
      const key = byKey(list);
      const store = new MemoryStore();
      const result = await syncInRanges(store, key, {
        fetchKeyPage: withKeylessAfter(key.fetchKeyPage, after),
      });
      assert.ok(key.requests.includes(after), 'an answer was asked from the rawId before the record');
      assert.equal(result.counts.rejected, 1);
      assert.deepEqual(
        store.rejected.map((r) => [r.raw, r.seenCount]),
        [['{"ledgerHash":"0xk"}', 1]],
      );
      assert.equal(storedIds(store).length, count);
    });
  }

  it('sets a record without a rawId aside once where the range below reads past its top', async () => {
    // A hole at the boundary of 1000: the first range's last answer reads past it, listing the
    // record between rawIds 995 and 1005; its own rawId (1002) puts it in the second range too.
    const list = new LiveList({ count: 2500 });
    list.records.splice(995, 9);
    const key = byKey(list);
    const store = new MemoryStore();
    const fetchKeyPage = withKeylessAt(key.fetchKeyPage, 1002);
    const result = await syncInRanges(store, key, { fetchKeyPage });
    assert.ok(
      key.requests.some((c) => c < 995 && c >= 900),
      'an answer of the first range was asked from below the hole',
    );
    assert.ok(key.requests.includes(1000), 'the second range was asked from its bottom');
    assert.equal(result.counts.rejected, 1);
    // One row, seen by both ranges' answers.
    assert.deepEqual(
      store.rejected.map((r) => r.raw),
      ['{"ledgerHash":"0xk"}'],
    );
  });

  it('sets a record without a rawId aside once where the walk after the lanes begins', async () => {
    // The head was 2500 when the run began; the top range's last answer reads past it through a
    // hole, listing the record (its own rawId 2502), which the walk, asked from 2500, lists first.
    const list = new LiveList({ count: 2600 });
    list.records.splice(2495, 9);
    const key = byKey(list);
    const store = new MemoryStore();
    const fetchKeyPage = withKeylessAt(key.fetchKeyPage, 2502);
    const result = await syncInRanges(store, key, { fetchKeyPage, fetchKeyHead: async () => 2500 });
    assert.ok(key.requests.includes(2500), 'the walk was asked from the head of the run');
    assert.equal(result.counts.rejected, 1);
    assert.deepEqual(
      store.rejected.map((r) => r.raw),
      ['{"ledgerHash":"0xk"}'],
    );
    assert.equal(storedIds(store).length, list.records.length);
  });

  it('leaves a short list to the walk: no head request, no run', async () => {
    const list = new LiveList({ count: 300 });
    const key = byKey(list);
    const store = new MemoryStore();
    const result = await syncInRanges(store, key, { rangeWidth: undefined });
    assert.equal(result.finished, true);
    assert.equal(key.requests.length, 3);
    assert.equal(key.heads.length, 1);
    assert.deepEqual(await store.provenRanges('txs'), []);
  });

  it('keeps the mark of a gap read before it could settle, so the tail reads a late record', async () => {
    const list = new LiveList({ count: 3000 });
    const late = list.records.splice(
      list.records.findIndex((tx) => tx.rawId === 2990),
      1,
    );
    const key = byKey(list);
    let clock = 1_000_000;
    const store = new MemoryStore({ now: () => new Date(clock) });
    const input = {
      store,
      backfills: store,
      fetchKeyPage: key.fetchKeyPage,
      fetchKeyHead: key.fetchKeyHead,
      spec,
      owner,
      count: 100,
      lanes: 2,
      rangeWidth: 1000,
      settleMs: 3000,
      now: () => clock,
    };
    const first = await syncByKey(input);
    assert.equal(first.watermark, 3000);
    assert.equal(storedIds(store).includes(2990), false);
    list.records.push(...late);
    list.records.sort((a, b) => a.rawId - b.rawId);
    clock += 1000;
    await syncByKey(input);
    assert.equal(storedIds(store).includes(2990), true, 'the record shown late is stored');
  });
});

/**
 * A store that parses the answers itself (`readAhead`), as the PostgreSQL store does on its
 * thread: it holds each answer's records in the window and commits them by their handle.
 * `refuse(cursor)` sends an answer back to the walk to parse.
 */
class ReadingStore extends MemoryStore {
  readonly readsAhead: Array<number | null> = [];
  constructor(private readonly refuse: (after: number | null) => boolean = () => false) {
    super();
  }
  override readAhead = async (answer: KeyAnswerText, window: { after: number | null; upTo: number }) => {
    this.readsAhead.push(window.after);
    if (this.refuse(window.after)) return null;
    let parsed: TxKeyPage;
    try {
      parsed = answer.parse();
    } catch {
      return null;
    }
    const { txs, hasNextPage } = parsed;
    const kept = txs.filter(
      (tx) => (window.after === null || tx.rawId > window.after) && tx.rawId <= window.upTo,
    );
    const records: HeldRecords = { held: true, rawIds: kept.map((tx) => tx.rawId), reading: kept };
    return {
      hasNextPage,
      rawIds: txs.map((tx) => tx.rawId),
      timestamps: txs.map((tx) => tx.timestamp),
      records,
    };
  };
  override commitRangePages(input: Parameters<MemoryStore['commitRangePages']>[0]) {
    const pages = input.pages.map((page) => ({
      ...page,
      records: isHeld(page.records) ? (page.records.reading as LedgerTx[]) : page.records,
    }));
    return super.commitRangePages({ ...input, pages });
  }
}

/** `byKey`'s answers as text in the service's compact shape; `mislead(cursor)` adds a rawId the parse does not read. */
function asText(
  list: LiveList,
  options: {
    cap: number;
    mislead?: (cursor: number) => number | undefined;
    spaced?: boolean;
    /** Cut this answer's text in half, as a connection lost mid-answer would. */
    cut?: (cursor: number) => boolean;
  },
) {
  const requests: number[] = [];
  const fetchKeyText: FetchKeyText = async (_spec, { cursor, count }) => {
    await new Promise((resolve) => setImmediate(resolve));
    requests.push(cursor);
    const after = list.records.filter((tx) => tx.rawId > cursor).sort((a, b) => a.rawId - b.rawId);
    const served = after.slice(0, Math.min(count ?? 100, options.cap));
    // rawId first, as the service writes it.
    const txs = served.map((tx) => Object.assign({ rawId: tx.rawId }, structuredClone(tx)));
    const decoy = options.mislead?.(cursor);
    // A record's nested object opening with a rawId of its own: the text's guess reads that one.
    if (decoy !== undefined && txs.length > 0) Object.assign(txs.at(-1)!, { express: { rawId: decoy } });
    const body = { txs, hasNextPage: after.length > served.length };
    const whole = options.spaced ? JSON.stringify(body, null, 1) : JSON.stringify(body);
    const text = options.cut?.(cursor) ? whole.slice(0, whole.length / 2) : whole;
    const guess = guessKeyAnswer(text);
    assert.equal(guess === null, options.spaced === true || text !== whole);
    return {
      text,
      guess,
      count: count ?? 100,
      parse: (): TxKeyPage => ({ ...(JSON.parse(text) as Omit<TxKeyPage, 'rejected'>), rejected: [], text }),
    };
  };
  return { fetchKeyText, requests };
}

describe('a tail by key far behind its head', () => {
  /** A mirror of 2,000 records synced in lanes, then `arrive` more at the head. */
  async function behind(arrive: number, options: { fail?: (cursor: number) => boolean } = {}) {
    const list = new LiveList({ count: 2000 });
    const key = byKey(list, options);
    const store = new MemoryStore();
    await syncInRanges(store, key, { fetchKeyPage: key.fetchKeyPage });
    const settled = store.streams.get('txs')?.settle.settled;
    assert.equal(settled, 2000, 'the first backfill settled the list');
    list.add(arrive);
    key.requests.length = 0;
    // As `sync` runs a tail of the global list: from the head, lanes as the in-flight size says.
    const tail = () => syncInRanges(store, key, { headFirst: true, lanes: () => 4 });
    return { list, key, store, tail };
  }

  it('hands the stretch to lanes that prove it, then tails from the head: every record once', async () => {
    const { list, key, store, tail } = await behind(8000);
    const result = await tail();
    assert.equal(result.finished, true);
    assert.equal(result.mode, 'tail');
    assert.equal(result.watermark, 10_000);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    // A catch-up run over what lay above the settled mark, proven and done.
    const runs = [...store.runs.values()].filter((r) => r.floor !== null);
    assert.deepEqual(
      runs.map((r) => [r.floor, r.headRawId, r.status]),
      [[2000, 10_000, 'done']],
    );
    assert.deepEqual(mergeRanges(await store.provenRanges('txs')), [{ lo: 0, hi: 10_000 }]);
    assert.equal(store.streams.get('txs')?.settle.settled, 10_000);
    // The head answer, 80 answers in ranges at once (no more where ranges meet without holes),
    // and the tail after them from the new watermark: nothing below the settled mark.
    assert.equal(key.requests[0], -1, 'the tail began at the head');
    assert.ok(
      key.requests.slice(1).every((cursor) => cursor >= 2000),
      `${key.requests}`,
    );
    assert.ok(key.requests.length <= 83, `${key.requests.length} requests`);
    const lanes = key.requests.slice(1, 5).sort((a, b) => a - b);
    assert.equal(new Set(lanes).size, 4, `four ranges at once: ${lanes}`);
  });

  it('reads a stretch of fewer answers than a catch-up pays for in the walk, with no run', async () => {
    const { list, key, store, tail } = await behind(1000);
    const result = await tail();
    // The head answer, then one answer at a time from the settled mark up to it.
    assert.ok(key.requests.length <= 11, `${key.requests.length} requests`);
    assert.equal(result.finished, true);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    assert.equal([...store.runs.values()].filter((r) => r.floor !== null).length, 0);
  });

  it("reads an account's list far behind its head the same way, in a run of its own stream", async () => {
    const spec = { account: '0xaaa' };
    const list = new LiveList({ count: 2000 });
    const key = byKey(list);
    const store = new MemoryStore();
    await syncInRanges(store, key, { spec });
    list.add(8000);
    key.requests.length = 0;
    const result = await syncInRanges(store, key, { spec, headFirst: true, lanes: () => 4 });
    assert.deepEqual([result.finished, result.mode, result.watermark], [true, 'tail', 10_000]);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    const runs = [...store.runs.values()].filter((r) => r.floor !== null);
    assert.deepEqual(
      runs.map((r) => [r.key, r.floor, r.headRawId, r.status]),
      [[result.key, 2000, 10_000, 'done']],
    );
    assert.equal(key.requests[0], -1, 'the tail began at the head');
    assert.equal(new Set(key.requests.slice(1, 5)).size, 4, 'four ranges at once');
  });

  it('takes over a catch-up a failure stopped: only what its proofs leave is read again', async () => {
    let failing = true;
    const { list, key, store, tail } = await behind(8000, { fail: (cursor) => failing && cursor === 6000 });
    await assert.rejects(tail(), /connection reset after rawId 6000/);
    assert.equal(store.streams.get('txs')?.watermark, 2000, 'no watermark past unproven stretches');
    const running = await store.runningRun('txs');
    assert.equal(running?.floor, 2000);
    failing = false;
    key.requests.length = 0;
    const result = await tail();
    assert.equal(result.finished, true);
    assert.equal(result.watermark, 10_000);
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    // Taken over, not planned again from a new head answer: ascending reads from the failed one.
    assert.ok(
      key.requests.every((cursor) => cursor >= 6000),
      `only unproven stretches: ${key.requests}`,
    );
    assert.equal([...store.runs.values()].filter((r) => r.floor !== null).length, 1);
    assert.equal((await store.getRun(running!.id))?.status, 'done');
  });
});

describe('sync --full by key', () => {
  it('reads the whole list again in lanes on its own proofs, and ends at the head it read', async () => {
    const list = new LiveList({ count: 3000 });
    const key = byKey(list);
    const store = new MemoryStore();
    await syncInRanges(store, key);
    // A phantom record once moved the watermark past the head; a record changed in the service.
    const stream = store.streams.get('txs')!;
    stream.watermark = 5000;
    list.records[1499] = { ...list.records[1499]!, status: 'packaged' };
    list.add(200);
    key.requests.length = 0;
    const result = await syncInRanges(store, key, { full: true, lanes: () => 4 });
    assert.equal(result.finished, true);
    assert.equal(result.mode, 'backfill');
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId),
    );
    assert.equal(store.rows.get(1500)?.status, 'packaged', 'the changed record read again');
    const repairs = [...store.runs.values()].filter((r) => r.floor === REPAIR_FLOOR);
    assert.deepEqual(
      repairs.map((r) => [r.headRawId, r.status]),
      [[3200, 'done']],
    );
    assert.deepEqual([stream.watermark, stream.walk], [3200, null], 'the head it read, below the phantom');
    // Every answer of the list once (32, a few more where ranges were split) and the tail after.
    assert.ok(key.requests.length <= 40, `${key.requests.length} requests`);
    assert.equal(
      new Set(key.requests.slice(0, 4)).size,
      4,
      `four ranges at once: ${key.requests.slice(0, 4)}`,
    );
  });

  it('is taken over by the next sync when it stops, which reads only what its proofs leave', async () => {
    const list = new LiveList({ count: 3000 });
    let failing = false;
    const key = byKey(list, { fail: (cursor) => failing && cursor === 2000 });
    const store = new MemoryStore();
    await syncInRanges(store, key);
    failing = true;
    await assert.rejects(syncInRanges(store, key, { full: true }), /connection reset after rawId 2000/);
    const running = await store.runningRun('txs');
    assert.equal(running?.floor, REPAIR_FLOOR);
    failing = false;
    key.requests.length = 0;
    // A sync without --full ends the repair the stopped one began.
    const result = await syncInRanges(store, key);
    assert.equal(result.finished, true);
    assert.equal((await store.getRun(running!.id))?.status, 'done');
    assert.ok(
      key.requests.every((cursor) => cursor >= 2000),
      `only unproven stretches: ${key.requests}`,
    );
    assert.equal([...store.runs.values()].filter((r) => r.floor === REPAIR_FLOOR).length, 1);
  });
});

describe('a range walk whose store parses the answers', () => {
  const task = { after: 299, upTo: 599 };
  const run = async (store: ReadingStore, list: LiveList, text: ReturnType<typeof asText>) => {
    await store.startRun({ id: 'r', key: 'txs', headRawId: 1200, totalPages: 0 });
    const parsed = byKey(list, { cap: 40 });
    const result = await fetchKeyRange({
      store,
      fetchKeyPage: parsed.fetchKeyPage,
      fetchKeyText: text.fetchKeyText,
      spec,
      backfillId: 'r',
      task,
      count: 100,
    });
    assert.deepEqual(
      storedIds(store),
      list.records.map((tx) => tx.rawId).filter((id) => id > task.after && id <= task.upTo),
    );
    assert.deepEqual(mergeRanges(await store.provenRanges('txs')), [{ lo: 300, hi: 599 }]);
    return { result, parsedRequests: parsed.requests };
  };

  it('asks for each next answer by the rawId its text names last: one request an answer', async () => {
    const list = new LiveList({ count: 400, step: () => 3 });
    const store = new ReadingStore();
    const text = asText(list, { cap: 40 });
    const { result, parsedRequests } = await run(store, list, text);
    assert.equal(result.pages, 3);
    assert.deepEqual(text.requests, [299, 418, 538]);
    assert.deepEqual(store.readsAhead, [299, 418, 538]);
    assert.deepEqual(parsedRequests, []);
  });

  it('drops unread the answer asked after a wrong guess and asks from the rawId the parse read', async () => {
    const list = new LiveList({ count: 400, step: () => 3 });
    const store = new ReadingStore();
    const text = asText(list, { cap: 40, mislead: (cursor) => (cursor === 299 ? 450 : undefined) });
    const { result } = await run(store, list, text);
    assert.equal(result.pages, 3);
    // 450 was asked on the guess and never read; the walk went on from 418.
    assert.deepEqual(text.requests, [299, 450, 418, 538]);
    assert.deepEqual(store.readsAhead, [299, 418, 538]);
  });

  it('waits for the parse of an answer whose text gives no guess, and reads it all the same', async () => {
    const list = new LiveList({ count: 400, step: () => 3 });
    const store = new ReadingStore();
    const text = asText(list, { cap: 40, spaced: true });
    const { result, parsedRequests } = await run(store, list, text);
    assert.equal(result.pages, 3);
    assert.deepEqual(text.requests, [299, 418, 538]);
    assert.deepEqual(store.readsAhead, [299, 418, 538]);
    assert.deepEqual(parsedRequests, []);
  });

  it('asks again, the way every answer is read, for an answer whose text was cut short', async () => {
    const list = new LiveList({ count: 400, step: () => 3 });
    const store = new ReadingStore();
    const text = asText(list, { cap: 40, cut: (cursor) => cursor === 418 });
    const { result, parsedRequests } = await run(store, list, text);
    assert.equal(result.pages, 3);
    assert.deepEqual(text.requests, [299, 418, 538]);
    // The cut answer was asked again by the fetch that parses, which retries and reports.
    assert.deepEqual(parsedRequests, [418]);
  });

  it('parses itself an answer the store sends back, without asking for it again', async () => {
    const list = new LiveList({ count: 400, step: () => 3 });
    const store = new ReadingStore((after) => after === 418);
    const text = asText(list, { cap: 40 });
    const { result, parsedRequests } = await run(store, list, text);
    assert.equal(result.pages, 3);
    assert.deepEqual(text.requests, [299, 418, 538]);
    assert.deepEqual(parsedRequests, []);
  });
});

describe('the answers lanes hold', () => {
  it('commits fewer answers at a time as lanes are added, so what they hold together stays flat', async () => {
    const answersPerCommit = async (lanes: number) => {
      const list = new LiveList({ count: 6000 });
      // About 1.2 MB of text an answer of a hundred records.
      for (const tx of list.records) tx.data = JSON.stringify({ memo: 'x'.repeat(12_000) });
      // Answers the store reads ahead commit in full batches only.
      const store = new ReadingStore();
      const sizes: number[] = [];
      const commit = store.commitRangePages.bind(store);
      store.commitRangePages = (input) => {
        sizes.push(input.pages.length);
        return commit(input);
      };
      const text = asText(list, { cap: 100 });
      await syncInRanges(store, byKey(list), { fetchKeyText: text.fetchKeyText, lanes: () => lanes });
      assert.equal(storedIds(store).length, 6000);
      return Math.max(...sizes);
    };
    // Two lanes: a share of 4 MiB, three answers or more. Sixteen: 512 KiB each, one answer (two
    // while fewer lanes run, at the start and the end).
    assert.equal(laneBatchBytes(2), 4 * 1024 * 1024);
    const few = await answersPerCommit(2);
    assert.ok(few >= 3, `${few} answers in one commit at 2 lanes`);
    const many = await answersPerCommit(16);
    assert.ok(many <= 2, `${many} answers in one commit at 16 lanes`);
  });
});
