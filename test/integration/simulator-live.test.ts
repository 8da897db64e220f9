import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulator } from '../../src/simulator/simulator.js';
import type { SimulatorOptions } from '../../src/simulator/types.js';
import { waitFor } from '../helpers/wait-for.js';

type Json = Record<string, unknown>;
type Tx = {
  rawId: number;
  status: string;
  id: string;
  timestamp: number;
  action: string;
  targetChainTxHash: string;
};

async function withSimulator(
  options: SimulatorOptions,
  body: (url: string, sim: ReturnType<typeof createSimulator>) => Promise<void>,
) {
  const sim = createSimulator(options);
  const { url } = await sim.listen();
  try {
    await body(url, sim);
  } finally {
    await sim.close();
  }
}

const getJson = async (url: string, init?: RequestInit): Promise<Json> =>
  (await (await fetch(url, init)).json()) as Json;
const page = async (url: string, n: number) =>
  (await getJson(`${url}/txs?page=${n}`)) as { totalPages: number; txs: Tx[] };

describe('simulator live behaviour', () => {
  it('a reader walking pages in order under arrivals sees repeats and no holes', async () => {
    await withSimulator({ records: 300, seed: 5, arrivalsPerSecond: 0 }, async (url, sim) => {
      const atStart = [...sim.records()].map((r) => r.rawId);
      const seen: number[] = [];
      let n = 1;
      let totalPages = 1;
      const totals: number[] = [];
      while (n <= totalPages) {
        const p = await page(url, n);
        totalPages = p.totalPages;
        totals.push(p.totalPages);
        seen.push(...p.txs.map((t) => t.rawId));
        await fetch(`${url}/_sim/records?count=${3 + (n % 7)}`, { method: 'POST' });
        n++;
      }
      const seenSet = new Set(seen);
      assert.deepEqual(
        atStart.filter((id) => !seenSet.has(id)),
        [],
        'no record present at the start is skipped',
      );
      assert.ok(seen.length > seenSet.size, 'records pushed down by arrivals are seen twice');
      assert.ok(totals.at(-1)! > totals[0]!, 'totalPages grows during the walk');
    });
  });

  it('a reader fetching a later page before an earlier one can miss records', async () => {
    await withSimulator({ records: 100, seed: 6 }, async (url, sim) => {
      const firstPageBefore = (await page(url, 1)).txs.map((t) => t.rawId);
      const second = (await page(url, 2)).txs.map((t) => t.rawId);
      sim.addRecords(10);
      const first = (await page(url, 1)).txs.map((t) => t.rawId);
      const seen = new Set([...first, ...second]);
      const missed = firstPageBefore.filter((id) => !seen.has(id));
      assert.deepEqual(missed, firstPageBefore, 'the old first page slid to page 2 and was never read');
    });
  });

  it('records arrive at the configured rate, and pause and resume on request', async () => {
    await withSimulator({ records: 50, seed: 7, arrivalsPerSecond: 400 }, async (url, sim) => {
      await waitFor('arrivals', async () => (sim.count() >= 150 ? true : undefined));
      const arrived = [...sim.records()].slice(50);
      assert.ok(
        arrived.every((r) => r.arrivedAtMs > Date.now() - 60_000),
        'arrivedAtMs is wall-clock time',
      );
      assert.deepEqual(await getJson(`${url}/_sim/arrivals/pause`, { method: 'POST' }), {
        running: false,
        perSecond: 400,
      });
      const paused = sim.count();
      // Nothing may arrive while paused: give the arrival clock several ticks.
      await new Promise((resolve) => setTimeout(resolve, 250));
      assert.equal(sim.count(), paused);
      await getJson(`${url}/_sim/arrivals/resume`, { method: 'POST' });
      await waitFor('arrivals after resume', async () => (sim.count() > paused + 20 ? true : undefined));
      await getJson(`${url}/_sim/arrivals?perSecond=0`, { method: 'POST' });
      assert.deepEqual(await getJson(`${url}/_sim/arrivals`), { running: true, perSecond: 0 });
    });
  });

  it('as records settle, only the fields that legitimately change do (the signed ones, sig and hash never)', async () => {
    await withSimulator({ records: 20, seed: 9, packageDelayMs: 60_000 }, async (_url, sim) => {
      const head = sim.headRawId();
      sim.addRecords(400);
      const mutable = new Set([
        'status',
        'id',
        'timestamp',
        'internalStatus',
        'targetChainTxHash',
        'express',
        'packagedAtMs',
        'targetLandedAtMs',
      ]);
      const fixed = (r: object) => JSON.stringify(Object.entries(r).filter(([k]) => !mutable.has(k)));
      const before = new Map([...sim.records({ afterRawId: head })].map((r) => [r.rawId, fixed(r)]));
      sim.settleAll();
      const settled = [...sim.records({ afterRawId: head })];
      assert.ok(settled.some((r) => r.action === 'burn' && r.targetChainTxHash));
      assert.ok(settled.some((r) => r.express?.chainTxHash || r.express?.refundLedgerHash));
      assert.deepEqual(
        settled.filter((r) => before.get(r.rawId) !== fixed(r)).map((r) => r.rawId),
        [],
      );
    });
  });

  it('a record arrives confirmed, becomes packaged later, and a burn lands on its target chain later still', async () => {
    await withSimulator(
      { records: 20, seed: 8, packageDelayMs: 150, burnTargetDelayMs: 300 },
      async (url, sim) => {
        const head = sim.headRawId();
        sim.addRecords(80);
        const fresh = (await page(url, 1)).txs;
        assert.ok(
          fresh.every((t) => t.rawId > head && t.status === 'confirmed' && t.id === '' && t.timestamp === 0),
        );
        const burns = [...sim.records({ afterRawId: head })]
          .filter((r) => r.action === 'burn')
          .map((r) => r.rawId);
        assert.ok(burns.length > 0);
        const packaged = await waitFor('packaging', async () => {
          const txs = (await page(url, 1)).txs;
          return txs.every((t) => t.status === 'packaged') ? txs : undefined;
        });
        assert.ok(packaged.every((t) => t.id !== '' && t.timestamp > 0));
        assert.ok(
          new Set(packaged.map((t) => t.id)).size < packaged.length,
          'records packaged together share a batch id',
        );
        const burnRecord = async () => {
          const res = (await getJson(`${url}/txs?action=burn`)) as { txs: Tx[] };
          return res.txs.find((t) => t.rawId === burns.at(-1));
        };
        const early = await burnRecord();
        if (early?.status === 'packaged' && early.targetChainTxHash === '') {
          await waitFor('burn target hash', async () =>
            (await burnRecord())?.targetChainTxHash ? true : undefined,
          );
        }
        assert.notEqual((await burnRecord())?.targetChainTxHash, '');
      },
    );
  });

  it('the ground truth says when each record was packaged and its target hash landed; the wire does not', async () => {
    const packageDelayMs = 150;
    const burnTargetDelayMs = 300;
    await withSimulator({ records: 20, seed: 8, packageDelayMs, burnTargetDelayMs }, async (url, sim) => {
      for (const record of sim.records()) {
        // The initial history: packaged at its ledger time, burns holding their hash from the start.
        assert.equal(record.packagedAtMs, record.timestamp);
        assert.equal(record.targetLandedAtMs, null);
      }
      const head = sim.headRawId();
      sim.addRecords(80);
      const arrived = [...sim.records({ afterRawId: head })];
      assert.ok(arrived.every((r) => r.packagedAtMs === null && r.targetLandedAtMs === null));
      assert.ok(arrived.some((r) => r.action === 'burn'));
      const settled = await waitFor('every record packaged and every burn landed', async () => {
        const records = [...sim.records({ afterRawId: head })];
        const done = records.every(
          (r) => r.status === 'packaged' && (r.action !== 'burn' || r.targetChainTxHash),
        );
        return done ? records : undefined;
      });
      for (const record of settled) {
        assert.equal(record.packagedAtMs, record.timestamp);
        assert.ok(record.packagedAtMs !== null && record.packagedAtMs >= record.arrivedAtMs + packageDelayMs);
        if (record.action !== 'burn') assert.equal(record.targetLandedAtMs, null);
        else
          assert.ok(
            record.targetLandedAtMs !== null &&
              record.targetLandedAtMs >= record.packagedAtMs + burnTargetDelayMs,
            `burn ${record.rawId} landed ${record.targetLandedAtMs}, packaged ${record.packagedAtMs}`,
          );
      }
      const dump = (await (await fetch(`${url}/_sim/records?afterRawId=${head}`)).text())
        .trimEnd()
        .split('\n');
      assert.deepEqual(
        dump.map((l) => JSON.parse(l) as Json).map((l) => [l.rawId, l.packagedAtMs, l.targetLandedAtMs]),
        settled.map((r) => [r.rawId, r.packagedAtMs, r.targetLandedAtMs]),
        'the NDJSON dump carries the same change times',
      );
      const { totalPages } = await page(url, 1);
      for (let n = 1; n <= totalPages; n++) {
        const text = await (await fetch(`${url}/txs?page=${n}`)).text();
        assert.ok(
          !/packagedAtMs|targetLandedAtMs|arrivedAtMs/.test(text),
          `page ${n} carries no change time`,
        );
      }
      const burn = settled.find((r) => r.action === 'burn')!;
      const byHash = await (await fetch(`${url}/txsByHash/${burn.ledgerHash}`)).text();
      assert.ok(byHash.includes(burn.ledgerHash) && !/packagedAtMs|targetLandedAtMs/.test(byHash));
    });
  });

  it('settles every pending record on request', async () => {
    await withSimulator({ records: 10, seed: 9, packageDelayMs: 3_600_000 }, async (url) => {
      await getJson(`${url}/_sim/records?count=40`, { method: 'POST' });
      assert.ok((await page(url, 1)).txs.every((t) => t.status === 'confirmed'));
      await getJson(`${url}/_sim/settle`, { method: 'POST' });
      const all = [...(await page(url, 1)).txs, ...(await page(url, 2)).txs];
      assert.ok(
        all.every((t) => t.status === 'packaged' && (t.action !== 'burn' || t.targetChainTxHash !== '')),
      );
    });
  });

  it('streams the ground truth as NDJSON, whole or after a rawId', async () => {
    await withSimulator({ records: 30_000, seed: 10, faults: { malformedRate: 0.01 } }, async (url, sim) => {
      const text = await (await fetch(`${url}/_sim/records`)).text();
      const lines = text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Json);
      assert.equal(lines.length, 30_000);
      assert.ok(lines.every((l, i) => i === 0 || (l.rawId as number) > (lines[i - 1]!.rawId as number)));
      assert.ok(lines.every((l) => typeof l.arrivedAtMs === 'number' && typeof l.tokenTag === 'string'));
      const malformed = lines.filter((l) => l.malformed).length;
      assert.equal(malformed, [...sim.records()].filter((r) => r.malformed).length);
      assert.ok(malformed > 0);
      const cut = lines[29_990]!.rawId as number;
      const tail = (await (await fetch(`${url}/_sim/records?afterRawId=${cut}`)).text())
        .trimEnd()
        .split('\n');
      assert.equal(tail.length, 9);
      assert.equal((await fetch(`${url}/_sim/records?afterRawId=x`)).status, 400);
    });
  });

  it('pages by key when the deployment offers it', async () => {
    await withSimulator({ records: 95, seed: 11 }, async (url, sim) => {
      const all = [...sim.records()].map((r) => r.rawId);
      const got: number[] = [];
      let cursor: number | undefined;
      for (;;) {
        const q = cursor === undefined ? 'order=asc&count=20' : `cursor=${cursor}&order=asc&count=20`;
        const res = (await getJson(`${url}/txs?${q}`)) as { txs: Tx[]; hasNextPage: boolean };
        got.push(...res.txs.map((t) => t.rawId));
        if (!res.hasNextPage) break;
        cursor = res.txs.at(-1)!.rawId;
      }
      assert.deepEqual(got, all);
      const desc = (await getJson(`${url}/txs?cursor=${all[50]}&order=desc&count=5`)) as { txs: Tx[] };
      assert.deepEqual(
        desc.txs.map((t) => t.rawId),
        all.slice(45, 50).reverse(),
      );
    });
  });

  it('counts requests by route and status', async () => {
    await withSimulator({ records: 10, seed: 12 }, async (url) => {
      await fetch(`${url}/txs`);
      await fetch(`${url}/txs?page=2`);
      await fetch(`${url}/txsByHash/0x00`);
      const stats = (await getJson(`${url}/_sim/stats`)) as {
        requests: Record<string, Record<string, number>>;
        records: number;
      };
      assert.deepEqual(stats.requests['GET /txs'], { '200': 2 });
      assert.deepEqual(stats.requests['GET /txsByHash/{ledgerHash}'], { '404': 1 });
      assert.equal(stats.records, 10);
      await fetch(`${url}/_sim/stats/reset`, { method: 'POST' });
      const reset = (await getJson(`${url}/_sim/stats`)) as { requests: Record<string, unknown> };
      assert.equal(reset.requests['GET /txs'], undefined);
    });
  });

  it('with late records, a reader following the head by cursor loses rows that a later walk finds in place', async () => {
    const options = {
      records: 50,
      seed: 8,
      arrivalsPerSecond: 200,
      lateRate: 0.5,
      lateMs: 400,
    };
    await withSimulator(options, async (url, sim) => {
      const start = sim.headRawId();
      // As the Go client follows the ledger: ascending from the last rawId received.
      let cursor = start;
      const followed = new Set<number>();
      await waitFor('records followed', async () => {
        const { txs } = (await getJson(`${url}/txs?order=asc&count=100&cursor=${cursor}`)) as { txs: Tx[] };
        for (const tx of txs) followed.add(tx.rawId);
        cursor = txs.at(-1)?.rawId ?? cursor;
        return followed.size >= 150;
      });
      sim.pauseArrivals();
      await waitFor(
        'every late record visible',
        async () => (await getJson(`${url}/_sim/stats`)).hiddenLate === 0,
      );
      const truth = [...sim.records({ afterRawId: start })].map((r) => r.rawId);
      const lost = truth.filter((id) => id <= cursor && !followed.has(id));
      assert.ok(lost.length > 10, `the follower lost ${lost.length} late records`);
      const walked: number[] = [];
      for (let n = 1; ; n++) {
        const p = await page(url, n);
        walked.push(...p.txs.map((t) => t.rawId).filter((id) => id > start));
        if (n >= p.totalPages) break;
      }
      assert.deepEqual(walked.reverse(), truth, 'a walk after lateMs lists every record, in rawId order');
    });
  });
});
