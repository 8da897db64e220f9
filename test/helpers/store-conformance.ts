/**
 * The behaviour every implementation of the sync engine's store ports must show, as one suite
 * registered against each of them: the PostgreSQL store (the reference) and the in-memory store
 * of the unit tests. It talks to the stores through the ports only. This file holds the leases,
 * fencing and checkpoints; `store-conformance-records.ts` the writes, re-reads and proofs.
 */

import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { PageCheckpoint, WalkCheckpoint } from '../../src/domain/checkpoints.js';

import type { LedgerTx } from '../../src/domain/model.js';
import type { StreamSpec } from '../../src/domain/stream-key.js';
import { CommitLostError, LeaseLostError } from '../../src/errors.js';
import type { BackfillStore } from '../../src/sync/ports/backfill-store.js';
import type { PageCommit, StreamLease, SyncStore } from '../../src/sync/ports/sync-store.js';
import { makeLedgerTx } from './ledger-tx.js';
import { recordConformance } from './store-conformance-records.js';

/** The stores under test. */
export interface StoresUnderTest {
  sync: SyncStore;
  backfill: BackfillStore;
}

/** Builds empty stores for one test, reading the time from `now` (the suite moves it). */
export type MakeStores = (now: () => Date) => Promise<StoresUnderTest>;

export const MINUTE = 60_000;

/** What a test's page commit sets besides its records: any field, and its one page's number (default 1). */
export type PageExtra = Partial<Omit<PageCommit, 'pages'>> & { page?: number };

/** What each test works with; fresh for every test. */
export interface ConformanceContext extends StoresUnderTest {
  /** The stores' clock. */
  at: Date;
  advance(ms: number): void;
  /** Takes a one-minute lease (unless told otherwise) on a stream, the global list by default. */
  acquire(owner: string, spec?: StreamSpec, leaseMs?: number): Promise<StreamLease>;
  /** A page commit of `records` under `lease` that leaves the walk and watermark unset. */
  page(lease: StreamLease, records: LedgerTx[], extra?: PageExtra): PageCommit;
  /** The stream's state as `owner`, the holder of a live lease on it, sees it when renewing. */
  state(owner: string, spec?: StreamSpec): Promise<{ watermark: number | null; walk: WalkCheckpoint | null }>;
  /** How many records are stored (every rawId used here is at least 1). */
  stored(): Promise<number>;
}

const START = Date.parse('2026-03-01T12:00:00Z');

const walkAt = (nextPage: number): PageCheckpoint => ({
  mode: 'backfill',
  nextPage,
  headRawId: 100,
  totalPages: 10,
});

/** Registers the suite (node:test `describe`/`it`) for the stores `makeStores` builds. */
export function storeConformance(name: string, makeStores: MakeStores): void {
  describe(`${name}: store conformance`, () => {
    const c = {} as ConformanceContext;
    Object.assign(c, {
      advance: (ms: number) => {
        c.at = new Date(c.at.getTime() + ms);
      },
      acquire: async (owner: string, spec: StreamSpec = {}, leaseMs = MINUTE) =>
        (await c.sync.acquireStream(spec, owner, leaseMs)).lease,
      page: (
        lease: StreamLease,
        records: LedgerTx[],
        { page = 1, ...extra }: PageExtra = {},
      ): PageCommit => ({
        lease,
        pages: [{ page, records }],
        rejected: [],
        walk: null,
        watermark: null,
        ...extra,
      }),
      state: async (owner: string, spec: StreamSpec = {}) => {
        const { state } = await c.sync.acquireStream(spec, owner, MINUTE);
        return { watermark: state.watermark, walk: state.walk };
      },
      stored: () => c.backfill.storedAbove(0),
    });
    beforeEach(async () => {
      c.at = new Date(START);
      Object.assign(c, await makeStores(() => c.at));
    });
    leaseConformance(c);
    fenceConformance(c);
    checkpointConformance(c);
    recordConformance(c);
  });
}

function leaseConformance(c: ConformanceContext): void {
  describe('leases', () => {
    it('creates a stream on first acquisition, with its spec and neither watermark nor walk', async () => {
      const { lease, state } = await c.sync.acquireStream(
        { account: 'acc', action: 'burn', tokenTag: '' },
        'runner-a',
        MINUTE,
      );
      assert.equal(lease.key, 'txsByAccount/acc?action=burn');
      assert.equal(lease.owner, 'runner-a');
      assert.ok(Number.isSafeInteger(lease.fence) && lease.fence > 0, `fence ${lease.fence}`);
      assert.deepEqual(state, {
        key: 'txsByAccount/acc?action=burn',
        spec: { account: 'acc', action: 'burn' },
        watermark: null,
        walk: null,
        settle: { settled: null, pending: null },
      });
    });

    it('refuses a second runner while the lease is live, naming the holder', async () => {
      const a = await c.acquire('runner-a');
      c.advance(MINUTE - 1000);
      await assert.rejects(
        c.sync.acquireStream({}, 'runner-b', MINUTE),
        (error: unknown) => error instanceof LeaseLostError && /runner-a/.test(error.message),
      );
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 1 })]));
      assert.equal(await c.stored(), 1, 'the holder still writes');
    });

    it('renews a live lease for its owner with the same fence', async () => {
      const a = await c.acquire('runner-a');
      c.advance(30_000);
      const renewed = await c.acquire('runner-a');
      assert.deepEqual(renewed, a);
      // The renewal counts from its own time: another runner still waits past the first expiry.
      c.advance(45_000);
      await assert.rejects(c.acquire('runner-b'), LeaseLostError);
    });

    it('hands an expired lease to another runner with a higher fence and the checkpoint as left', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [], { walk: walkAt(5) }));
      c.advance(2 * MINUTE);
      const { lease: b, state } = await c.sync.acquireStream({}, 'runner-b', MINUTE);
      assert.ok(b.fence > a.fence, `fence ${b.fence} after ${a.fence}`);
      assert.deepEqual(state.walk, walkAt(5));
    });

    it('gives an owner taking back its own expired lease a new fence', async () => {
      const a = await c.acquire('runner-a');
      c.advance(2 * MINUTE);
      const again = await c.acquire('runner-a');
      assert.ok(again.fence > a.fence);
      await assert.rejects(c.sync.commitPage(c.page(a, [])), LeaseLostError);
    });

    it('hands a released lease on at once with a higher fence; a stale release frees nothing', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.releaseStream(a, { ok: true });
      const b = await c.acquire('runner-b');
      assert.ok(b.fence > a.fence);
      await c.sync.releaseStream(a, { ok: false, error: 'late' });
      await assert.rejects(c.acquire('runner-c'), LeaseLostError);
      await c.sync.releaseStream(b, { ok: false, error: 'HTTP 503' });
      const next = await c.acquire('runner-c');
      assert.ok(next.fence > b.fence);
    });

    it('extends the lease with every committed page, by the length asked for', async () => {
      const a = await c.acquire('runner-a');
      c.advance(50_000);
      await c.sync.commitPage(c.page(a, []));
      c.advance(50_000);
      await assert.rejects(c.acquire('runner-b'), LeaseLostError);
      c.advance(11_000);
      const b = await c.acquire('runner-b');
      assert.ok(b.fence > a.fence);
    });

    it('keeps the leases of different streams apart', async () => {
      const global = await c.acquire('runner-a');
      const account = await c.acquire('runner-b', { account: 'acc' });
      assert.notEqual(global.key, account.key);
      await c.sync.commitPage(c.page(global, [], { walk: walkAt(2) }));
      await c.sync.commitPage(c.page(account, [], { walk: walkAt(7) }));
      assert.deepEqual((await c.state('runner-a')).walk, walkAt(2));
      assert.deepEqual((await c.state('runner-b', { account: 'acc' })).walk, walkAt(7));
    });
  });
}

function fenceConformance(c: ConformanceContext): void {
  describe('fencing', () => {
    it("refuses a stale fence's page and leaves checkpoint, watermark and records as they were", async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 1 })], { walk: walkAt(5) }));
      c.advance(2 * MINUTE);
      await c.acquire('runner-b');
      const stale = c.page(a, [makeLedgerTx({ rawId: 2 })], { walk: walkAt(2), watermark: 1 });
      await assert.rejects(c.sync.commitPage(stale), LeaseLostError);
      assert.deepEqual(await c.state('runner-b'), { watermark: null, walk: walkAt(5) });
      assert.equal(await c.stored(), 1, 'the stale page stored nothing');
    });

    it("refuses a stale fence's watermark", async () => {
      const a = await c.acquire('runner-a');
      await c.sync.advanceWatermark(a, 40);
      c.advance(2 * MINUTE);
      await c.acquire('runner-b');
      await assert.rejects(c.sync.advanceWatermark(a, 90), LeaseLostError);
      assert.equal((await c.state('runner-b')).watermark, 40);
    });

    it('refuses a page for a stream never acquired', async () => {
      const lease: StreamLease = { key: 'txsByAccount/nobody', fence: 1, owner: 'runner-a' };
      await assert.rejects(c.sync.commitPage(c.page(lease, [makeLedgerTx({ rawId: 1 })])), LeaseLostError);
      assert.equal(await c.stored(), 0);
    });

    it('lets the last fence write after its lease expired, as long as nobody took it', async () => {
      const a = await c.acquire('runner-a');
      c.advance(5 * MINUTE);
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 1 })], { walk: walkAt(3) }));
      assert.deepEqual((await c.state('runner-a')).walk, walkAt(3));
    });
  });
}

function checkpointConformance(c: ConformanceContext): void {
  describe('checkpoints', () => {
    it('moves the checkpoint with each commit, in order, and the next holder resumes at the last', async () => {
      const a = await c.acquire('runner-a');
      for (const page of [1, 2, 3]) {
        const records = [makeLedgerTx({ rawId: 100 - page })];
        await c.sync.commitPage(c.page(a, records, { page, walk: walkAt(page + 1) }));
        assert.deepEqual((await c.state('runner-a')).walk, walkAt(page + 1));
      }
      await c.sync.releaseStream(a, { ok: false, error: 'stopped' });
      const { state } = await c.sync.acquireStream({}, 'runner-b', MINUTE);
      assert.deepEqual([state.walk, state.watermark], [walkAt(4), null]);
    });

    it('refuses a commit whose predecessor is not stored (lost in a crash), and keeps the checkpoint', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [makeLedgerTx({ rawId: 90 })], { fromPage: 1, walk: walkAt(4) }));
      // The commit of pages 4-6 never reached the database; the walk goes on at page 7.
      const next = c.page(a, [makeLedgerTx({ rawId: 60 })], { fromPage: 7, page: 9, walk: walkAt(10) });
      await assert.rejects(c.sync.commitPage(next), CommitLostError);
      const last = c.page(a, [makeLedgerTx({ rawId: 1 })], {
        fromPage: 7,
        page: 9,
        walk: null,
        watermark: 99,
      });
      await assert.rejects(c.sync.commitPage(last), CommitLostError);
      assert.deepEqual(await c.state('runner-a'), { watermark: null, walk: walkAt(4) });
      assert.equal(await c.stored(), 1, 'the refused commits stored nothing');
      await c.sync.commitPage(
        c.page(a, [makeLedgerTx({ rawId: 60 })], { fromPage: 4, page: 6, walk: walkAt(7) }),
      );
      assert.deepEqual((await c.state('runner-a')).walk, walkAt(7), 'the commit that follows on is taken');
    });

    it('keeps the settling state the last commit of a walk writes, and leaves it on other commits', async () => {
      const a = await c.acquire('runner-a');
      const settle = { settled: 90, pending: { rawId: 100, at: Date.parse('2026-01-02T03:04:05.678Z') } };
      await c.sync.commitPage(c.page(a, [], { walk: null, watermark: 100, settle }));
      await c.sync.commitPage(c.page(a, [], { walk: walkAt(2), watermark: 100 }));
      const { state } = await c.sync.acquireStream({}, 'runner-a', MINUTE);
      assert.deepEqual(state.settle, settle);
      // Later heads waiting too, oldest first.
      const later = [
        { rawId: 120, at: Date.parse('2026-01-02T03:04:06.500Z') },
        { rawId: 130, at: Date.parse('2026-01-02T03:04:07.250Z') },
      ];
      await c.sync.commitPage(c.page(a, [], { walk: null, watermark: 130, settle: { ...settle, later } }));
      const again = await c.sync.acquireStream({}, 'runner-a', MINUTE);
      assert.deepEqual(again.state.settle, { ...settle, later });
      await c.sync.commitPage(
        c.page(a, [], { walk: null, watermark: 130, settle: { settled: 130, pending: null } }),
      );
      const settled = await c.sync.acquireStream({}, 'runner-a', MINUTE);
      assert.deepEqual(settled.state.settle, { settled: 130, pending: null });
    });

    it('ends a walk with the page that clears it and sets the watermark', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.commitPage(c.page(a, [], { walk: walkAt(9) }));
      await c.sync.commitPage(
        c.page(a, [makeLedgerTx({ rawId: 1 })], { page: 10, walk: null, watermark: 100 }),
      );
      await c.sync.releaseStream(a, { ok: true });
      const { state } = await c.sync.acquireStream({}, 'runner-b', MINUTE);
      assert.deepEqual([state.walk, state.watermark], [null, 100]);
    });

    it('tells whether a stream was started without taking its lease', async () => {
      assert.equal(await c.backfill.streamStarted('txs'), false);
      const a = await c.acquire('runner-a');
      assert.equal(await c.backfill.streamStarted('txs'), false, 'a lease alone starts nothing');
      await c.sync.commitPage(c.page(a, [], { walk: walkAt(2) }));
      assert.equal(await c.backfill.streamStarted('txs'), true);
      const b = await c.acquire('runner-b', { account: 'acc' });
      await c.sync.advanceWatermark(b, 5);
      assert.equal(await c.backfill.streamStarted('txsByAccount/acc'), true);
    });

    it('moves the watermark forward only, leaving the walk as it is', async () => {
      const a = await c.acquire('runner-a');
      await c.sync.advanceWatermark(a, 10);
      assert.equal((await c.state('runner-a')).watermark, 10, 'from none');
      await c.sync.commitPage(c.page(a, [], { walk: walkAt(3), watermark: 40 }));
      await c.sync.advanceWatermark(a, 80);
      await c.sync.advanceWatermark(a, 60);
      assert.deepEqual(await c.state('runner-a'), { watermark: 80, walk: walkAt(3) });
    });
  });
}
