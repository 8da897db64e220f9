import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FaultInjector } from '../../src/simulator/faults.js';
import { groundTruthOf } from '../../src/simulator/ground-truth.js';
import { SimulatedLedger } from '../../src/simulator/ledger.js';
import { json, matchPublicRoute, type PublicRouteContext } from '../../src/simulator/public-routes.js';
import { createSimulator } from '../../src/simulator/simulator.js';
import type { GroundTruthRecord } from '../../src/simulator/types.js';

const START = Date.UTC(2026, 0, 2);
const LATE_MS = 1500;

/**
 * A ledger with late records and its public routes, answered in-process: each request first
 * moves the ledger to the test's clock, as the HTTP handler does.
 */
function lateLedger(seed = 7) {
  const clock = { now: START };
  const ledger = new SimulatedLedger({
    seed,
    records: 300,
    holeRate: 0.01,
    packageDelayMs: 1000,
    burnTargetDelayMs: 5000,
    jsonCacheSize: 10_000,
    historyEndMs: START - 60_000,
    late: { rate: 0.5, delayMs: LATE_MS },
  });
  const ctx: PublicRouteContext = {
    ledger,
    paging: 'both',
    keyLimits: { maxCount: 0, refuseCountAbove: 0 },
    recordFaults: () => ({ malformedRate: 0, tamperedRate: 0 }),
    submit: () => json(500, { error: 'err_internal' }),
  };
  const get = (url: string): { status: number; body: Record<string, unknown> } => {
    ledger.advance(clock.now);
    const { pathname, searchParams } = new URL(url, 'http://sim');
    const route = matchPublicRoute(ctx, 'GET', pathname, searchParams);
    assert.ok(route, url);
    const reply = route.answer(undefined);
    return { status: reply.status, body: JSON.parse(String(reply.body)) as Record<string, unknown> };
  };
  const truth = groundTruthOf(ledger, new FaultInjector(seed));
  const records = () => {
    ledger.reveal(clock.now);
    return [...truth.records()];
  };
  return { ledger, clock, get, truth: records };
}

type Tx = { rawId: number; ledgerHash: string; status: string };

/** Every page of a numbered list, in order: the rawIds and the totalPages page 1 gave. */
function walkPages(get: ReturnType<typeof lateLedger>['get'], path: string) {
  const sep = path.includes('?') ? '&' : '?';
  const first = get(`${path}${sep}page=1`).body as { totalPages: number; txs: Tx[] };
  const rawIds = first.txs.map((t) => t.rawId);
  for (let page = 2; page <= first.totalPages; page++)
    rawIds.push(...(get(`${path}${sep}page=${page}`).body.txs as Tx[]).map((t) => t.rawId));
  return { rawIds, totalPages: first.totalPages };
}

/** Every record of a key-paged list, newest first. */
function walkKeys(get: ReturnType<typeof lateLedger>['get'], path: string): number[] {
  const rawIds: number[] = [];
  let cursor: number | undefined;
  for (;;) {
    const at = cursor === undefined ? '' : `&cursor=${cursor}`;
    const page = get(`${path}${path.includes('?') ? '&' : '?'}order=desc&count=7${at}`).body as {
      txs: Tx[];
      hasNextPage: boolean;
    };
    rawIds.push(...page.txs.map((t) => t.rawId));
    if (!page.hasNextPage) return rawIds;
    cursor = page.txs.at(-1)?.rawId;
  }
}

describe('simulator late records', () => {
  it('keeps a share of arriving records out of every list, count and look-up until lateMs has passed', () => {
    const { ledger, clock, get, truth } = lateLedger();
    const history = truth();
    const sample = history.at(-1)!;
    const account = sample.from;
    const isOf = (r: GroundTruthRecord) => r.from === account || r.to === account;
    const lists: Array<[string, (r: GroundTruthRecord) => boolean]> = [
      ['/txs', () => true],
      ['/txs?tokenTag=' + sample.tokenTag, (r) => r.tokenTag === sample.tokenTag],
      ['/txs?action=transfer', (r) => r.action === 'transfer'],
      ['/txs?withoutAction=mint', (r) => r.action !== 'mint'],
      [`/txsByAccount/${account}`, (r) => r.from === account || r.to === account],
      [
        `/txs/${account}?tokenTag=${sample.tokenTag}`,
        (r) => (r.from === account || r.to === account) && r.tokenTag === sample.tokenTag,
      ],
    ];
    // Filtered lists built before the arrivals: late records must be inserted into them later.
    for (const [path] of lists) walkPages(get, path);

    ledger.arrive(120, clock.now);
    clock.now += 10;
    const visible = truth();
    const all = [...Array(ledger.table.count).keys()].map((pos) => ledger.render(pos));
    const hidden = all.filter((r) => !visible.some((v) => v.rawId === r.rawId));
    const arrived = visible.filter((r) => r.rawId > history.at(-1)!.rawId);
    assert.ok(hidden.length > 20 && arrived.length > 20, `${hidden.length} hidden, ${arrived.length} shown`);
    assert.ok(
      hidden.some((h) => h.rawId < arrived.at(-1)!.rawId),
      'a hidden record sits below records already listed',
    );
    assert.ok(
      hidden.every((h) => h.rawId > history.at(-1)!.rawId),
      'the initial history is never late',
    );

    const expectLists = (records: GroundTruthRecord[], when: string) => {
      for (const [path, keep] of lists) {
        const expected = records
          .filter(keep)
          .map((r) => r.rawId)
          .reverse();
        const { rawIds, totalPages } = walkPages(get, path);
        assert.deepEqual(rawIds, expected, `${path} ${when}`);
        assert.equal(totalPages, Math.ceil(expected.length / 10), `${path} totalPages ${when}`);
        assert.deepEqual(walkKeys(get, path), expected, `${path} key paging ${when}`);
      }
      const transfers = records.filter((r) => isOf(r) && r.action === 'transfer').map((r) => r.rawId);
      const byAddress = `/txs?address=${account}&action=transfer`;
      assert.deepEqual(walkKeys(get, byAddress), transfers.reverse(), `${byAddress} ${when}`);
      // A list first asked for now is built from the visible records too.
      const left = when === 'while hidden' ? 'transfer' : 'burn';
      const fresh = `/txsByAccount/${account}?withoutAction=${left}&tokenTag=${sample.tokenTag}`;
      const keep = (r: GroundTruthRecord) =>
        (r.from === account || r.to === account) && r.action !== left && r.tokenTag === sample.tokenTag;
      assert.deepEqual(
        walkPages(get, fresh).rawIds,
        records
          .filter(keep)
          .map((r) => r.rawId)
          .reverse(),
      );
    };
    expectLists(visible, 'while hidden');

    for (const h of hidden) {
      assert.equal(get(`/txsByHash/${h.ledgerHash}`).status, 404, `rawId ${h.rawId} looked up while hidden`);
      assert.equal(get(`/tx/${h.ledgerHash}`).status, 404, `rawId ${h.rawId} looked up by /tx while hidden`);
      const accountList = walkPages(get, `/txsByAccount/${h.from}`).rawIds;
      assert.ok(!accountList.includes(h.rawId), `rawId ${h.rawId} in its sender's list while hidden`);
      const keyed = get(`/txs?order=asc&cursor=${h.rawId - 1}&count=1`).body.txs as Tx[];
      assert.notEqual(keyed[0]?.rawId, h.rawId);
    }
    const hiddenMint = hidden.find((h) => h.action === 'mint');
    assert.ok(hiddenMint, 'a mint among the hidden records');
    assert.equal(get(`/mintedTxByChainTxHash/${hiddenMint.targetChainTxHash}`).status, 404);
    assert.equal(get(`/minted/${hiddenMint.targetChainTxHash}`).status, 404);

    clock.now += LATE_MS;
    const after = truth();
    assert.deepEqual(
      after.map((r) => r.rawId),
      all.map((r) => r.rawId),
      'every record once lateMs has passed',
    );
    expectLists(after, 'after lateMs');
    for (const h of hidden) {
      const found = get(`/txsByHash/${h.ledgerHash}`);
      assert.equal(found.status, 200);
      // Its status changed counting from its arrival, while it was hidden.
      assert.equal((found.body.tx as Tx).status, 'packaged');
    }
    assert.equal(get(`/mintedTxByChainTxHash/${hiddenMint.targetChainTxHash}`).status, 200);
  });

  it('lists in the ground truth only the records visible now, with count and head to match', () => {
    const clock = { now: START };
    const sim = createSimulator({ records: 500, seed: 4, lateRate: 1, lateMs: 5000, now: () => clock.now });
    assert.equal(sim.count(), 500, 'the initial history is never late');
    const head = sim.headRawId();
    const given = sim.addRecords(25);
    assert.ok(given > head);
    assert.equal(sim.count(), 500);
    assert.equal(sim.headRawId(), head);
    assert.equal([...sim.records()].length, 500);
    assert.equal([...sim.records({ afterRawId: head })].length, 0);
    clock.now += 4999;
    assert.equal(sim.count(), 500);
    clock.now += 1;
    const records = [...sim.records()];
    assert.equal(records.length, 525);
    assert.equal(sim.headRawId(), given);
    assert.ok(records.every((r, i) => i === 0 || r.rawId > records[i - 1]!.rawId));
  });

  it('shows every late record at once on settleAll', () => {
    const clock = { now: START };
    const sim = createSimulator({ records: 50, seed: 4, lateRate: 1, lateMs: 60_000, now: () => clock.now });
    sim.addRecords(10);
    assert.equal(sim.count(), 50);
    sim.settleAll();
    assert.equal(sim.count(), 60);
  });

  it('chooses the same late records for the same seed', () => {
    const hiddenRawIds = (seed: number) => {
      const sim = createSimulator({ records: 100, seed, lateRate: 0.3, now: () => START });
      const head = sim.headRawId();
      const given = sim.addRecords(200);
      const shown = new Set([...sim.records({ afterRawId: head })].map((r) => r.rawId));
      const all = createSimulator({ records: 100, seed, lateRate: 0 });
      all.addRecords(200);
      const allIds = [...all.records({ afterRawId: head })].map((r) => r.rawId);
      assert.equal(allIds.at(-1), given);
      return allIds.filter((id) => !shown.has(id));
    };
    const a = hiddenRawIds(9);
    assert.ok(a.length > 30 && a.length < 100, `${a.length} late of 200`);
    assert.deepEqual(hiddenRawIds(9), a);
    assert.notDeepEqual(hiddenRawIds(10), a);
  });

  it('makes nothing late by default', () => {
    const sim = createSimulator({ records: 100, seed: 3, now: () => START });
    sim.addRecords(300);
    assert.equal(sim.count(), 400);
  });

  it('refuses a lateRate outside 0..1 and a negative lateMs', () => {
    assert.throws(() => createSimulator({ records: 10, lateRate: 1.5 }), /lateRate/);
    assert.throws(() => createSimulator({ records: 10, lateRate: -0.1 }), /lateRate/);
    assert.throws(() => createSimulator({ records: 10, lateMs: -1 }), /lateMs/);
    assert.throws(() => createSimulator({ records: 10, lateRate: Number.NaN }), /lateRate/);
  });
});
