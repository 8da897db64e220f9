/**
 * The store conformance suite's part on records (see `store-conformance.ts`): upserts and their
 * counts, the re-read queue, backfill runs and proven ranges.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommitLostError } from '../../src/errors.js';
import { REPAIR_FLOOR } from '../../src/sync/ports/backfill-store.js';
import { makeLedgerTx } from './ledger-tx.js';
import type { ConformanceContext } from './store-conformance.js';

const SECOND = 1000;
const DAY = 24 * 60 * 60 * SECOND;

export function recordConformance(c: ConformanceContext): void {
  writeConformance(c);
  gapConformance(c);
  rereadConformance(c);
  proofConformance(c);
}

function writeConformance(c: ConformanceContext): void {
  describe('writes', () => {
    it('stores a record once: the same page committed again changes nothing', async () => {
      const a = await c.acquire('runner-a');
      const records = [1, 2, 3].map((rawId) => makeLedgerTx({ rawId }));
      const first = await c.sync.commitPage(c.page(a, records));
      assert.deepEqual(first, { inserted: 3, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 });
      c.advance(SECOND);
      const again = await c.sync.commitPage(c.page(a, records));
      assert.deepEqual(again, { inserted: 0, updated: 0, unchanged: 3, rejected: 0, conflicts: 0 });
      assert.equal(await c.stored(), 3);
    });

    it('counts inserted, updated and unchanged records, comparing what is stored', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(
        c.page(a, [
          makeLedgerTx({ rawId: 1, status: 'confirmed' }),
          makeLedgerTx({ rawId: 2, amount: '1000' }),
        ]),
      );
      const counts = await c.sync.commitPage(
        c.page(a, [
          makeLedgerTx({ rawId: 1, status: 'packaged' }),
          // Leading zeros are not stored: the same amount.
          makeLedgerTx({ rawId: 2, amount: '0001000' }),
          makeLedgerTx({ rawId: 3 }),
        ]),
      );
      assert.deepEqual(counts, { inserted: 1, updated: 1, unchanged: 1, rejected: 0, conflicts: 0 });
    });

    it('keeps the last of several sightings of one rawId in a batch, and the first of conflicting ones', async () => {
      const a = await c.acquire('runner-a');
      const counts = await c.sync.commitPage(
        c.page(a, [
          makeLedgerTx({ rawId: 1, status: 'confirmed' }),
          makeLedgerTx({ rawId: 2 }),
          makeLedgerTx({ rawId: 1 }),
          makeLedgerTx({ rawId: 2, fee: '99' }),
        ]),
      );
      assert.deepEqual(counts, { inserted: 2, updated: 0, unchanged: 0, rejected: 0, conflicts: 1 });
      const again = await c.sync.commitPage(
        c.page(a, [makeLedgerTx({ rawId: 1 }), makeLedgerTx({ rawId: 2 })]),
      );
      assert.equal(again.unchanged, 2, 'the packaged sighting of 1 and the first version of 2 were stored');
    });

    it('records a repeat on a later page of the same commit that disagrees as a conflict, keeping the first', async () => {
      const a = await c.acquire('runner-a');
      const first = makeLedgerTx({ rawId: 7, amount: '100' });
      const counts = await c.sync.commitPage({
        ...c.page(a, []),
        pages: [
          { page: 3, records: [makeLedgerTx({ rawId: 8 }), first] },
          { page: 4, records: [{ ...first, amount: '999' }, makeLedgerTx({ rawId: 6 })] },
        ],
      });
      assert.deepEqual(counts, { inserted: 3, updated: 0, unchanged: 0, rejected: 0, conflicts: 1 });
      c.advance(SECOND);
      const again = await c.sync.commitPage(c.page(a, [first]));
      assert.equal(again.unchanged, 1, 'the first sighting was stored');
    });

    it('sets aside malformed records and a ledgerHash another rawId holds, counting them rejected', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 1 })]));
      const counts = await c.sync.commitPage(
        c.page(
          a,
          [makeLedgerTx({ rawId: 5, amount: '12abc' }), makeLedgerTx({ rawId: 6, ledgerHash: '0xhash1' })],
          {
            rejected: [{ reason: 'amount is not decimal digits', raw: '{"rawId":9}', rawId: 9 }],
          },
        ),
      );
      assert.deepEqual(counts, { inserted: 0, updated: 0, unchanged: 0, rejected: 3, conflicts: 0 });
      // Rejected records keep their rawIds, which the backfill counts as held by the mirror.
      assert.equal(await c.stored(), 4);
      assert.equal(await c.backfill.storedAbove(5), 2);
    });
  });
}

function gapConformance(c: ConformanceContext): void {
  describe('stored gaps', () => {
    it('names the gaps of a span between stored records, highest first, each ranked below a rawId', async () => {
      const a = await c.acquire('runner-a');
      const ids = [1, 2, 3, 5, 6, 9, 10, 11, 12, 20, 21];
      await c.sync.commitPage(
        c.page(
          a,
          ids.map((rawId) => makeLedgerTx({ rawId })),
        ),
      );
      const gaps = c.sync.storedGaps.bind(c.sync);
      assert.deepEqual(await gaps({ above: 3, upTo: 12, rankUpTo: 20, limit: 4 }), [
        { above: 9, below: 6, rank: 4 },
        { above: 5, below: 3, rank: 6 },
      ]);
      assert.deepEqual(
        await gaps({ above: 4, upTo: 15, rankUpTo: 21, limit: 4 }),
        [
          { above: 20, below: 12, rank: 1 },
          { above: 9, below: 6, rank: 5 },
          { above: 5, below: 3, rank: 7 },
        ],
        'a span whose top is not stored reaches the record above it; its bottom the record below',
      );
      assert.equal(await gaps({ above: 0, upTo: 12, rankUpTo: 21, limit: 4 }), null, 'nothing stored below');
      assert.equal(await gaps({ above: 3, upTo: 25, rankUpTo: 21, limit: 4 }), null, 'nothing stored above');
      assert.equal(await gaps({ above: 1, upTo: 21, rankUpTo: 21, limit: 2 }), null, 'more than the limit');
      assert.deepEqual(await gaps({ above: 9, upTo: 12, rankUpTo: 21, limit: 2 }), []);
    });
  });
}

function rereadConformance(c: ConformanceContext): void {
  const confirmed = makeLedgerTx({ rawId: 1, status: 'confirmed', id: '', timestamp: 0 });
  /** A burn without its target-chain hash, one minute old when the test starts. */
  const burn = () =>
    makeLedgerTx({ rawId: 2, action: 'burn', timestamp: Date.parse('2026-03-01T11:59:00Z') });
  const due = async (ahead = 0, limit = 10) =>
    (await c.sync.duePending(limit, new Date(c.at.getTime() + ahead))).map((p) => [
      p.rawId,
      p.ledgerHash,
      p.attempts,
    ]);

  describe('re-reads', () => {
    it('queues records not final, due after the recheck delay in rawId order, and final ones not', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 3 }), burn(), confirmed]));
      assert.deepEqual(await due(1999), []);
      assert.deepEqual(await due(2 * SECOND), [
        [1, '0xhash1', 0],
        [2, '0xhash2', 0],
      ]);
      assert.deepEqual(await due(2 * SECOND, 1), [[1, '0xhash1', 0]]);
    });

    it("claims only what was due by the run's start, and holds the claim from now", async () => {
      const a = await c.acquire('runner-a');
      const written = c.at.getTime();
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 3 }), burn(), confirmed]));
      c.advance(2 * SECOND);
      // Due now, but not by the start of a run that began a second after the page was written.
      assert.deepEqual(await c.sync.claimDue(10, c.at, { dueBy: new Date(written + SECOND) }), []);
      // A run that began long ago (a long walk) claims what was due by its start...
      c.advance(18 * SECOND);
      const claimed = await c.sync.claimDue(10, c.at, { dueBy: new Date(written + 3 * SECOND) });
      assert.deepEqual(
        claimed.map((p) => p.rawId),
        [2, 1],
      );
      // ...and holds them for the claim's length from now, not from its start.
      c.advance(10 * SECOND);
      assert.deepEqual(await c.sync.claimDue(10, c.at), [], 'still claimed');
    });

    it('claims due records once, newest first, with their ranks in the global and the burn list', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 3 }), burn(), confirmed]));
      c.advance(2 * SECOND);
      const claimed = await c.sync.claimDue(10, c.at, { rankLimit: 100 });
      assert.deepEqual(
        claimed.map((p) => [p.rawId, p.listRank, p.burnRank]),
        [
          [2, 1, 0],
          [1, 2, null],
        ],
      );
      assert.deepEqual(await c.sync.claimDue(10, c.at), [], 'a claimed record is not handed out again');
      assert.deepEqual(await due(DAY), [
        [1, '0xhash1', 0],
        [2, '0xhash2', 0],
      ]);
    });

    it('re-reads a record still not final after the recheck delay, until it settles', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [confirmed, burn()]));
      c.advance(2 * SECOND);
      const counts = await c.sync.commitReread({ records: [confirmed, burn()], missing: [], now: c.at });
      assert.deepEqual(counts, { inserted: 0, updated: 0, unchanged: 2, rejected: 0, conflicts: 0 });
      // Not packaged at its first re-read: it just missed it, and the next run reads it again.
      // The burn, packaged and waiting for its hash, is due after the recheck delay.
      assert.deepEqual(await due(), [[1, '0xhash1', 1]]);
      c.advance(SECOND);
      await c.sync.commitReread({ records: [confirmed], missing: [], now: c.at });
      assert.deepEqual(await due(999), [], 'missed twice: back to the recheck delay');
      assert.deepEqual(await due(1999), [[2, '0xhash2', 1]], 'the burn comes due first');
      c.advance(2 * SECOND);
      assert.deepEqual(await due(), [
        [2, '0xhash2', 1],
        [1, '0xhash1', 2],
      ]);
      const settled = await c.sync.commitReread({
        records: [
          { ...confirmed, status: 'packaged', id: 'b', timestamp: 1 },
          { ...burn(), targetChainTxHash: '0xlanded' },
        ],
        missing: [],
        now: c.at,
      });
      assert.deepEqual(settled, { inserted: 0, updated: 2, unchanged: 0, rejected: 0, conflicts: 0 });
      assert.deepEqual(await due(DAY), []);
    });

    it('re-reads a record the service no longer knows later, like one not final, and keeps it', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [confirmed]));
      c.advance(2 * SECOND);
      const [pending] = await c.sync.duePending(10, c.at);
      assert.ok(pending);
      await c.sync.commitReread({ records: [], missing: [pending], now: c.at });
      assert.deepEqual(await due(1999), []);
      assert.deepEqual(await due(2 * SECOND), [[1, '0xhash1', 1]]);
      assert.equal(await c.stored(), 1);
    });

    it('backs a straggler off with its age once reads find it unchanged, up to the cap, and gives it up after a day', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [confirmed]));
      const delays: number[] = [];
      for (let read = 0; read < 500; read++) {
        const [next] = await c.sync.duePending(1, new Date(c.at.getTime() + 2 * DAY));
        if (next === undefined) break;
        // The smallest wait after which it is due, to the millisecond.
        let [early, delay] = [0, 2 * DAY];
        while (delay - early > 1) {
          const mid = Math.floor((early + delay) / 2);
          if ((await due(mid)).length > 0) delay = mid;
          else early = mid;
        }
        delays.push(delay);
        c.advance(delay);
        await c.sync.commitReread({ records: [confirmed], missing: [], now: c.at });
      }
      // Every 2 s for its first two minutes (at once after its first re-read: it just missed
      // being packaged); then a quarter of its age, at most an hour.
      assert.deepEqual(delays.slice(0, 61), [2 * SECOND, 1, ...Array(59).fill(2 * SECOND)]);
      assert.deepEqual(delays.slice(61, 63), [30_000, 37_500]);
      assert.equal(Math.max(...delays), 60 * 60 * SECOND);
      const age = delays.reduce((x, y) => x + y, 0);
      assert.ok(age > DAY && age < DAY + 60 * 60 * SECOND, `given up on a day after first sight (${age} ms)`);
      assert.equal(await c.stored(), 1, 'a record given up on stays stored');
    });

    it('stops waiting on a burn whose target-chain hash does not come within its window', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [burn()]));
      c.advance(DAY + 60 * 60 * SECOND);
      await c.sync.commitReread({ records: [burn()], missing: [], now: c.at });
      assert.deepEqual(await due(DAY), []);
    });

    it('counts a queued record committed again on a page as read, and drops it once committed final', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [confirmed]));
      c.advance(20 * SECOND);
      await c.sync.commitPage(c.page(a, [{ ...confirmed, id: 'b' }]));
      assert.deepEqual(await due(1999), []);
      assert.deepEqual(await due(2 * SECOND), [[1, '0xhash1', 0]]);
      await c.sync.commitPage(c.page(a, [{ ...confirmed, id: 'b', status: 'packaged' }]));
      assert.deepEqual(await due(DAY), []);
    });
  });
}

function proofConformance(c: ConformanceContext): void {
  const records = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => makeLedgerTx({ rawId: to - i }));
  const run = { key: 'txs', headRawId: 30, totalPages: 3 };
  /** A range proven by the run `backfillId`, its records stored. */
  const prove = (backfillId: string, lo: number, hi: number) =>
    c.backfill.commitRangePages({
      key: 'txs',
      backfillId,
      proven: [{ lo, hi }],
      pages: [{ page: 1, records: records(Math.max(lo, 1), hi), rejected: [] }],
    });

  describe('backfill runs and proofs', () => {
    it('runs one backfill per stream at a time, and ends it with its check', async () => {
      const started = await c.backfill.startRun({ id: 'b1', ...run });
      assert.deepEqual(started, {
        id: 'b1',
        ...run,
        status: 'running',
        round: 0,
        headAt: c.at.getTime(),
        openGap: null,
        floor: null,
        gapFloor: null,
      });
      assert.equal(await c.backfill.startRun({ id: 'b2', ...run }), null, 'one running run per stream');
      assert.ok(await c.backfill.startRun({ id: 'b3', ...run, key: 'txsByAccount/acc' }));
      assert.deepEqual(await c.backfill.runningRun('txs'), started);
      await c.backfill.recordCheck({ id: 'b1', round: 2, gaps: [], status: 'done' });
      assert.deepEqual(await c.backfill.getRun('b1'), { ...started, status: 'done', round: 2 });
      assert.equal(await c.backfill.runningRun('txs'), null);
      await c.backfill.recordCheck({ id: 'b1', round: 3, gaps: [{ lo: 1, hi: 2 }], status: 'failed' });
      assert.equal((await c.backfill.getRun('b1'))?.status, 'done', 'an ended run stays as it ended');
      assert.equal(await c.backfill.startRun({ id: 'b1', ...run }), null, 'a run id is used once');
      assert.ok(await c.backfill.startRun({ id: 'b4', ...run }));
      assert.equal(await c.backfill.getRun('nope'), null);
    });

    it('never lowers the round a check records', async () => {
      await c.backfill.startRun({ id: 'b1', ...run });
      await c.backfill.recordCheck({ id: 'b1', round: 3, gaps: [{ lo: 1, hi: 5 }], status: 'running' });
      await c.backfill.recordCheck({ id: 'b1', round: 1, gaps: [], status: 'running' });
      assert.equal((await c.backfill.getRun('b1'))?.round, 3);
    });

    it('moves a watermark asked to be proven only while the proven ranges reach it', async () => {
      await c.backfill.startRun({ id: 'b9', key: 'txs', headRawId: 30, totalPages: 3 });
      const prove = (lo: number, hi: number, openGap?: number) =>
        c.backfill.commitRangePages({
          key: 'txs',
          backfillId: 'b9',
          proven: [{ lo, hi }],
          pages: [{ page: 1, records: records(Math.max(lo, 1), hi), rejected: [], openGap }],
        });
      await prove(0, 10);
      await prove(21, 30, 25);
      const a = await c.acquire('runner-a');
      const scope = { backfillId: 'b9', floor: null };
      await assert.rejects(c.sync.advanceWatermark(a, 30, { proven: scope }), CommitLostError);
      assert.equal((await c.state('runner-a')).watermark, null, 'nothing moved');
      await prove(11, 20);
      await c.sync.advanceWatermark(a, 30, { proven: scope });
      assert.equal((await c.state('runner-a')).watermark, 30);
      assert.equal((await c.backfill.getRun('b9'))?.openGap, 25, 'the lowest open gap of the run is kept');
    });

    it("moves a catch-up's watermark on its own proofs above its floor, while the stream's mark reaches it", async () => {
      const a = await c.acquire('runner-a');
      // A first backfill's proofs reach 50, but the stream has settled only up to 20.
      await prove('first', 0, 50);
      await c.sync.advanceWatermark(a, 30, { settle: { settled: 20, pending: { rawId: 30, at: 0 } } });
      const run = await c.backfill.startRun({
        id: 'c1',
        key: 'txs',
        headRawId: 50,
        totalPages: 0,
        floor: 20,
        gapFloor: 30,
      });
      assert.deepEqual([run?.floor, run?.gapFloor], [20, 30]);
      const running = await c.backfill.runningRun('txs');
      assert.deepEqual([running?.floor, running?.gapFloor], [20, 30], 'the floors are stored with the run');
      const scope = { backfillId: 'c1', floor: 20 };
      await prove('c1', 21, 40);
      assert.deepEqual(await c.backfill.provenRanges('txs', 'c1'), [{ lo: 21, hi: 40 }]);
      assert.deepEqual(await c.backfill.provenRanges('txs'), [{ lo: 0, hi: 50 }]);
      // The first backfill's proof of 41..50 is not the run's: the watermark stays.
      await assert.rejects(c.sync.advanceWatermark(a, 50, { proven: scope }), CommitLostError);
      await prove('c1', 41, 50);
      await c.sync.advanceWatermark(a, 50, { proven: scope, settle: { settled: 50, pending: null } });
      assert.equal((await c.state('runner-a')).watermark, 50);
      // A floor above the stream's settled mark (a crash took the mark back) proves nothing.
      await c.backfill.recordCheck({ id: 'c1', round: 0, gaps: [], status: 'done' });
      await c.backfill.startRun({ id: 'c2', key: 'txs', headRawId: 90, totalPages: 0, floor: 60 });
      await prove('c2', 61, 90);
      await assert.rejects(
        c.sync.advanceWatermark(a, 90, { proven: { backfillId: 'c2', floor: 60 } }),
        CommitLostError,
      );
      assert.equal((await c.state('runner-a')).watermark, 50, 'nothing moved');
    });

    it("sets a repair's watermark on its own proofs from rawId 0, below a phantom one, and ends the walk", async () => {
      const a = await c.acquire('runner-a');
      // A phantom record once moved the watermark to 90; a walk by key stands at 70.
      await c.sync.commitPage(
        c.page(a, records(1, 5), { walk: { mode: 'tail', cursor: 70 }, watermark: 90 }),
      );
      await prove('first', 0, 60);
      await c.backfill.startRun({ id: 'r1', key: 'txs', headRawId: 60, totalPages: 0, floor: REPAIR_FLOOR });
      const scope = { backfillId: 'r1', floor: REPAIR_FLOOR };
      await prove('r1', 31, 60);
      // The first backfill's proof of 0..30 is not the repair's.
      await assert.rejects(c.sync.advanceWatermark(a, 60, { proven: scope }), CommitLostError);
      assert.equal((await c.state('runner-a')).watermark, 90, 'nothing moved');
      await prove('r1', 0, 30);
      await c.sync.advanceWatermark(a, 60, { proven: scope, settle: { settled: 60, pending: null } });
      const state = await c.state('runner-a');
      assert.deepEqual([state.watermark, state.walk], [60, null], 'the run head, the walk over');
      // Any other watermark still only moves up.
      await c.sync.advanceWatermark(a, 40);
      assert.equal((await c.state('runner-a')).watermark, 60);
    });

    it('stores range pages with the ranges they prove, and gives the ranges back merged', async () => {
      const counts = await c.backfill.commitRangePages({
        key: 'txs',
        backfillId: 'b1',
        proven: [{ lo: 11, hi: 20, loPage: 2 }],
        pages: [{ page: 2, records: records(11, 20), rejected: [] }],
      });
      assert.deepEqual(counts, { inserted: 10, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 });
      const batch = await c.backfill.commitRangePages({
        key: 'txs',
        backfillId: 'b1',
        pages: [
          { page: 1, records: records(21, 30), rejected: [] },
          { page: 2, records: records(11, 20), rejected: [{ reason: 'bad', raw: '{}', rawId: 35 }] },
        ],
        proven: [
          { lo: 21, hi: 30, loPage: 1 },
          { lo: 40, hi: 50 },
        ],
      });
      assert.deepEqual(batch, { inserted: 10, updated: 0, unchanged: 10, rejected: 1, conflicts: 0 });
      await c.backfill.commitRangePages({
        key: 'txsByAccount/acc',
        backfillId: 'b2',
        proven: [{ lo: 0, hi: 100 }],
        pages: [{ page: 1, records: [], rejected: [] }],
      });
      const proven = await c.backfill.provenRanges('txs');
      assert.deepEqual(proven, [
        { lo: 11, hi: 30, loPage: 2 },
        { lo: 40, hi: 50 },
      ]);
      assert.equal(await c.backfill.compactProvenRanges('txs'), proven.length);
      assert.deepEqual(await c.backfill.provenRanges('txs'), proven, 'compaction keeps the proof');
      assert.deepEqual(await c.backfill.provenRanges('txsByAccount/acc'), [{ lo: 0, hi: 100 }]);
      assert.equal(await c.backfill.storedAbove(15), 16);
    });
  });
}
