import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { releaseDeadLeases } from '../../src/cli/stale-leases.js';
import { countNonFinal, listStreams, recentRuns } from '../../src/db/queries/stream-queries.js';
import { queryOne } from '../../src/db/rows.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import { asPageCheckpoint } from '../../src/domain/checkpoints.js';
import { LeaseLostError } from '../../src/errors.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import { MINUTE, useStoreFixture } from '../helpers/store-fixture.js';

describe('PostgreSQL store: leases, runs and re-reads', () => {
  const f = useStoreFixture();

  it('refuses a stale writer: the older lease cannot commit once a newer one exists', async () => {
    const first = await f.store.acquireStream({ account: 'acc' }, 'runner-a', MINUTE);
    await f.store.commitPage(
      f.page(first.lease, [makeLedgerTx({ rawId: 1 })], {
        walk: { mode: 'backfill', nextPage: 5, headRawId: 100, totalPages: 9 },
      }),
    );
    f.clock = new Date(f.clock.getTime() + 2 * MINUTE);
    const second = await f.store.acquireStream({ account: 'acc' }, 'runner-b', MINUTE);
    assert.ok(second.lease.fence > first.lease.fence);
    assert.equal(asPageCheckpoint(second.state.walk)?.nextPage, 5);
    await assert.rejects(
      f.store.commitPage(
        f.page(first.lease, [makeLedgerTx({ rawId: 2 })], {
          walk: { mode: 'backfill', nextPage: 2, headRawId: 100, totalPages: 9 },
          watermark: 1,
        }),
      ),
      LeaseLostError,
    );
    const [stream] = await listStreams(f.t.database.db);
    assert.equal(asPageCheckpoint(stream?.walk)?.nextPage, 5);
    assert.equal(stream?.watermark, null);
    assert.equal(stream?.leaseOwner, 'runner-b');
    const stored = await f.q<{ raw_id: string }>(sql`SELECT raw_id::text FROM ledger_transactions`);
    assert.deepEqual(stored, [{ raw_id: '1' }]);
    // The stale runner's release does not free the new owner's lease.
    await f.store.releaseStream(first.lease, { ok: false, error: 'late' });
    assert.equal((await listStreams(f.t.database.db))[0]?.leaseOwner, 'runner-b');
  });

  it('refuses another owner while a lease is live, and hands it over after expiry', async () => {
    const a = await f.store.acquireStream({}, 'runner-a', MINUTE);
    await assert.rejects(f.store.acquireStream({}, 'runner-b', MINUTE), (error: unknown) => {
      return error instanceof LeaseLostError && /runner-a/.test(error.message);
    });
    // Renewal by the same owner keeps the fence.
    const renewed = await f.store.acquireStream({}, 'runner-a', MINUTE);
    assert.equal(renewed.lease.fence, a.lease.fence);
    // A committed page extends the lease.
    f.clock = new Date(f.clock.getTime() + 50_000);
    await f.store.commitPage(f.page(a.lease, []));
    f.clock = new Date(f.clock.getTime() + 50_000);
    await assert.rejects(f.store.acquireStream({}, 'runner-b', MINUTE), LeaseLostError);
    f.clock = new Date(f.clock.getTime() + MINUTE);
    const b = await f.store.acquireStream({}, 'runner-b', MINUTE);
    assert.equal(b.lease.fence, a.lease.fence + 1);
    await f.store.releaseStream(b.lease, { ok: true });
    const c = await f.store.acquireStream({}, 'runner-c', MINUTE);
    assert.equal(c.lease.fence, b.lease.fence + 1);
    const runs = await recentRuns(f.t.database.db, { streamKey: 'txs' });
    assert.deepEqual(
      runs.map((r) => [r.owner, r.outcome]),
      [
        ['runner-c', 'running'],
        ['runner-b', 'ok'],
        ['runner-a', 'error'],
      ],
    );
  });

  it('records outcomes and run counts for status', async () => {
    const l = await f.lease('acc-1');
    await f.store.commitPage(
      f.page(l, [makeLedgerTx({ rawId: 1 }), makeLedgerTx({ rawId: 2 })], { watermark: 2 }),
    );
    await f.store.commitPage(f.page(l, [makeLedgerTx({ rawId: 2 })], { watermark: 2 }));
    await f.store.releaseStream(l, { ok: false, error: 'HTTP 503' });
    const l2 = await f.lease('acc-1');
    await f.store.releaseStream(l2, { ok: false, error: 'HTTP 503 again' });
    let [stream] = await listStreams(f.t.database.db);
    assert.equal(stream?.key, 'txsByAccount/acc-1');
    assert.deepEqual(stream?.spec, { account: 'acc-1' });
    assert.equal(stream?.watermark, 2);
    assert.equal(stream?.errorStreak, 2);
    assert.equal(stream?.lastError, 'HTTP 503 again');
    assert.equal(stream?.leaseOwner, null);
    const l3 = await f.lease('acc-1');
    await f.store.releaseStream(l3, { ok: true });
    [stream] = await listStreams(f.t.database.db);
    assert.equal(stream?.errorStreak, 0);
    assert.equal(stream?.lastSuccessAt?.toISOString(), f.clock.toISOString());
    const [firstRun] = (await recentRuns(f.t.database.db)).filter((r) => r.fence === l.fence);
    assert.deepEqual(
      [firstRun?.pages, firstRun?.inserted, firstRun?.unchanged, firstRun?.outcome],
      [2, 2, 1, 'error'],
    );
  });

  it('records a run stopped by a signal as stopped, not as an error of the stream', async () => {
    const l = await f.lease('acc-2');
    await f.store.releaseStream(l, { ok: false, error: 'HTTP 503' });
    const l2 = await f.lease('acc-2');
    await f.store.releaseStream(l2, { ok: false, stopped: true, error: 'stopped by SIGTERM' });
    const [stream] = await listStreams(f.t.database.db);
    assert.deepEqual([stream?.errorStreak, stream?.lastError, stream?.leaseOwner], [1, 'HTTP 503', null]);
    const [stoppedRun] = (await recentRuns(f.t.database.db)).filter((r) => r.fence === l2.fence);
    assert.equal(stoppedRun?.outcome, 'stopped');
  });

  it('moves a watermark forward only, keeping the walk and counting no page, under the fence', async () => {
    const walk = { mode: 'tail' as const, nextPage: 3, headRawId: 90, totalPages: 9 };
    const l = await f.lease();
    await f.store.commitPage(f.page(l, [], { walk, watermark: 40 }));
    await f.store.advanceWatermark(l, 80);
    await f.store.advanceWatermark(l, 60);
    let [stream] = await listStreams(f.t.database.db);
    assert.deepEqual([stream?.watermark, stream?.walk], [80, walk]);
    assert.equal((await recentRuns(f.t.database.db))[0]?.pages, 1);
    f.clock = new Date(f.clock.getTime() + 11 * MINUTE);
    await f.store.acquireStream({}, 'runner-2', MINUTE);
    await assert.rejects(f.store.advanceWatermark(l, 100), LeaseLostError);
    [stream] = await listStreams(f.t.database.db);
    assert.equal(stream?.watermark, 80);
  });

  it("frees the re-read claims of a sync found gone at the next run's start, and keeps a live one's", async () => {
    const l = await f.lease();
    const [one, two] = [1, 2].map((rawId) =>
      makeLedgerTx({ rawId, status: 'confirmed', id: '', timestamp: 0 }),
    );
    await f.store.commitPage(f.page(l, [one!, two!]));
    f.clock = new Date(f.clock.getTime() + 2_000);
    const [gone, live] = ['sync:h:1:gone', 'sync:h:2:live'];
    assert.deepEqual(
      (await f.store.claimDue(1, f.clock, { owner: gone })).map((d) => d.rawId),
      [1],
    );
    assert.deepEqual(
      (await f.store.claimDue(1, f.clock, { owner: live })).map((d) => d.rawId),
      [2],
    );
    const claims = () =>
      f.q<{ raw_id: string; claimed_by: string | null }>(
        sql`SELECT raw_id::text, claimed_by FROM ledger_tx_rechecks ORDER BY raw_id`,
      );
    assert.deepEqual(await claims(), [
      { raw_id: '1', claimed_by: gone },
      { raw_id: '2', claimed_by: live },
    ]);
    assert.deepEqual(await f.store.claimDue(10, f.clock), [], 'both are claimed');

    const logs: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line)) });
    const judged: string[] = [];
    await releaseDeadLeases({
      database: f.t.database,
      store: f.store,
      logger,
      isGone: async (owner) => {
        judged.push(owner);
        return owner === gone;
      },
      now: f.clock,
    });
    assert.ok(judged.includes(gone) && judged.includes(live), judged.join());
    assert.deepEqual(await claims(), [
      { raw_id: '1', claimed_by: null },
      { raw_id: '2', claimed_by: live },
    ]);
    assert.ok(
      logs.some((l) => l['msg'] === 're-read claims of an ended sync process released' && l['records'] === 1),
    );
    // Due again at once: the next claim takes it, and its committed re-read ends the claim.
    const again = await f.store.claimDue(10, f.clock, { owner: 'sync:h:3:next' });
    assert.deepEqual(
      again.map((d) => d.rawId),
      [1],
    );
    await f.store.commitReread({ records: [one!], missing: [], now: f.clock });
    assert.deepEqual(await claims(), [
      { raw_id: '1', claimed_by: null },
      { raw_id: '2', claimed_by: live },
    ]);
  });

  it('queues records not final, re-reads them every recheck delay while young, and claims each once', async () => {
    const l = await f.lease();
    const confirmed = makeLedgerTx({ rawId: 1, status: 'confirmed', id: '', timestamp: 0 });
    const burn = makeLedgerTx({ rawId: 2, action: 'burn', timestamp: f.clock.getTime() - MINUTE });
    const done = makeLedgerTx({ rawId: 3 });
    await f.store.commitPage(f.page(l, [confirmed, burn, done]));
    assert.deepEqual(await f.store.duePending(10, f.clock), []);
    assert.deepEqual(await countNonFinal(f.t.database.db, f.clock), { notPackaged: 1, queued: 2, due: 0 });

    f.clock = new Date(f.clock.getTime() + 2_000);
    const claimed = await f.store.claimDue(10, f.clock, { rankLimit: 500 });
    assert.deepEqual(
      claimed.map((d) => [d.rawId, d.ledgerHash, d.attempts, d.listRank, d.burnRank]),
      [
        [2, '0xhash2', 0, 1, 0],
        [1, '0xhash1', 0, 2, null],
      ],
    );
    assert.deepEqual(await f.store.claimDue(10, f.clock), [], 'claimed records are not handed out twice');
    // Still confirmed: it just missed being packaged, so the next run reads it again. The burn,
    // still without its hash, is due again after the recheck delay.
    const counts = await f.store.commitReread({ records: [confirmed, burn], missing: [], now: f.clock });
    assert.deepEqual(counts, { inserted: 0, updated: 0, unchanged: 2, rejected: 0, conflicts: 0 });
    assert.deepEqual(
      (await f.store.duePending(10, new Date(f.clock.getTime() + 1_999))).map((d) => d.rawId),
      [1],
    );
    f.clock = new Date(f.clock.getTime() + 2_000);
    assert.equal((await f.store.duePending(10, f.clock)).length, 2);
    // Seen again on a page: just read, so not due before the recheck delay from now.
    await f.store.commitPage(f.page(l, [confirmed]));
    assert.deepEqual(
      (await f.store.duePending(10, new Date(f.clock.getTime() + 1_999))).map((d) => d.rawId),
      [2],
    );
    // Packaged now; the burn's hash appeared: both leave the queue, and history shows the change.
    await f.store.commitReread({
      records: [
        { ...confirmed, status: 'packaged', id: 'b', timestamp: 1 },
        { ...burn, targetChainTxHash: '0xlanded' },
      ],
      missing: [],
      now: f.clock,
    });
    assert.deepEqual(await countNonFinal(f.t.database.db, f.clock), { notPackaged: 0, queued: 0, due: 0 });
    const history = await queryOne<{ n: number }>(
      f.t.database.db,
      sql`SELECT count(*)::int AS n FROM ledger_tx_status_history WHERE raw_id = 1`,
    );
    assert.equal(history.n, 2);
  });

  it('reads a straggler found unchanged with a delay growing with its age, up to the cap, then gives up', async () => {
    f.store = createPgStore({
      database: f.t.database,
      now: () => f.clock,
      recheck: {
        recheckAfterMs: 1000,
        stragglerAgeMs: 10_000,
        fastReads: 2,
        maxMs: 20_000,
        burnWindowMs: 120_000,
      },
    });
    const l = await f.lease();
    const tx = makeLedgerTx({ rawId: 1, status: 'confirmed' });
    await f.store.commitPage(f.page(l, [tx]));
    const delays: number[] = [];
    for (let i = 0; i < 200; i++) {
      const [pending] = await f.q<{ due_at: Date }>(sql`SELECT due_at FROM ledger_tx_rechecks`);
      if (!pending) break;
      delays.push(new Date(pending.due_at).getTime() - f.clock.getTime());
      f.clock = new Date(pending.due_at);
      assert.equal((await f.store.claimDue(1, f.clock)).length, 1);
      await f.store.commitReread({ records: [tx], missing: [], now: f.clock });
    }
    // Young: every second (at once after the first re-read, which it just missed). A straggler
    // (10 s old): a quarter of its age, then at most 20 s.
    assert.deepEqual(delays.slice(0, 11), [1000, 0, ...Array(9).fill(1000)]);
    assert.deepEqual(delays.slice(11, 14), [2500, 3125, 3906]);
    assert.equal(Math.max(...delays), 20_000);
    const age = delays.reduce((a, b) => a + b, 0);
    assert.ok(age >= 120_000 && age < 140_000, `given up on once two minutes old (${age} ms)`);
    const stored = await f.q<{ raw_id: string }>(sql`SELECT raw_id::text FROM ledger_transactions`);
    assert.equal(stored.length, 1, 'a record given up on stays stored');
  });

  it('stops waiting on a burn whose target-chain hash never comes', async () => {
    const l = await f.lease();
    const burn = makeLedgerTx({ rawId: 1, action: 'burn', timestamp: f.clock.getTime() });
    await f.store.commitPage(f.page(l, [burn]));
    f.clock = new Date(f.clock.getTime() + 25 * 60 * MINUTE);
    await f.store.commitReread({ records: [burn], missing: [], now: f.clock });
    assert.deepEqual(await countNonFinal(f.t.database.db, f.clock), { notPackaged: 0, queued: 0, due: 0 });
  });
});
