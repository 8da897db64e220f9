import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulator } from '../../src/simulator/simulator.js';
import type { SimulatorOptions } from '../../src/simulator/types.js';

type Tx = { rawId: number; ledgerHash: string; targetChainTxHash: string; action: string };
type ListBody = { txs: Tx[]; hasNextPage?: boolean; totalPages?: number; currentPage?: number };
type Stats = {
  requests: Record<string, Record<string, number>>;
  keyRequests: number;
  pageRequests: number;
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

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as ListBody & Record<string, unknown> };
};

/** A client that pages by number, as the interface document says: until page >= totalPages. */
async function pageClient(
  url: string,
  path: string,
  limit: number,
): Promise<{ requests: number; rawIds: number[] }> {
  const rawIds: number[] = [];
  let requests = 0;
  for (let page = 1; page <= limit; page++) {
    requests++;
    const { body } = await get(`${url}${path}?page=${page}`);
    rawIds.push(...body.txs.map((t) => t.rawId));
    if (!(typeof body.totalPages === 'number' && page < body.totalPages)) break;
  }
  return { requests, rawIds };
}

describe('simulator paging dialects over HTTP', () => {
  it('counts list requests by dialect, in /_sim/stats and in-process', async () => {
    await withSimulator({ records: 120, seed: 31 }, async (url, sim) => {
      const truth = [...sim.records()];
      const account = truth.at(-1)!.from;
      await get(`${url}/txs`);
      await get(`${url}/txs?page=2`);
      await get(`${url}/txsByAccount/${account}`);
      await get(`${url}/txs?order=asc&count=100`);
      await get(`${url}/txs?address=${account}&count=100`);
      await get(`${url}/txs/${account}?cursor=5&order=ASC`);
      await get(`${url}/txs?cursor=x`);
      await get(`${url}/tx/${truth[0]!.ledgerHash}`);
      const stats = (await get(`${url}/_sim/stats`)).body as unknown as Stats;
      assert.equal(stats.pageRequests, 3);
      assert.equal(stats.keyRequests, 4, 'a refused key request is a key request too');
      assert.deepEqual(sim.listRequests(), { keyRequests: 4, pageRequests: 3 });
      assert.deepEqual(stats.requests['GET /txs'], { '200': 4, '400': 1 });
      assert.deepEqual(stats.requests['GET /tx/{ledgerHash}'], { '200': 1 });
      const reset = (await (await fetch(`${url}/_sim/stats/reset`, { method: 'POST' })).json()) as Stats;
      assert.equal(reset.keyRequests, 0);
      assert.deepEqual(sim.listRequests(), { keyRequests: 0, pageRequests: 0 });
    });
  });

  it('a key-only deployment answers a page-number client once, with no totalPages to loop on', async () => {
    await withSimulator({ records: 300, seed: 32, paging: 'key' }, async (url, sim) => {
      const newest = [...sim.records()]
        .slice(-10)
        .map((r) => r.rawId)
        .reverse();
      const run = await pageClient(url, '/txs', 1000);
      assert.equal(run.requests, 1);
      assert.deepEqual(run.rawIds, newest);
      const third = (await get(`${url}/txs?page=3`)).body;
      assert.deepEqual(Object.keys(third), ['txs', 'hasNextPage']);
      assert.equal(third.hasNextPage, true);
      assert.deepEqual(sim.listRequests(), { keyRequests: 2, pageRequests: 0 });
    });
  });

  it('a page-only deployment ignores the key parameters', async () => {
    await withSimulator({ records: 300, seed: 33, paging: 'page' }, async (url, sim) => {
      const keyed = (await get(`${url}/txs?cursor=20&order=asc&count=100`)).body;
      assert.deepEqual(keyed, (await get(`${url}/txs`)).body);
      assert.equal(keyed.totalPages, 30);
      assert.equal(keyed.txs.length, 10);
      assert.deepEqual(sim.listRequests(), { keyRequests: 0, pageRequests: 2 });
      const run = await pageClient(url, '/txs', 1000);
      assert.equal(run.requests, 30);
    });
  });

  it('both: a key walk asc from 0 by 100 gets what the page walk gets, in fewer requests', async () => {
    await withSimulator({ records: 1000, seed: 34 }, async (url, sim) => {
      const pages = await pageClient(url, '/txs', 1000);
      const rawIds: number[] = [];
      let cursor = 0;
      for (;;) {
        const at = cursor > 0 ? `&cursor=${cursor}` : '';
        const { body } = await get(`${url}/txs?order=asc&count=100${at}`);
        rawIds.push(...body.txs.map((t) => t.rawId));
        if (!body.hasNextPage) break;
        cursor = body.txs.at(-1)!.rawId;
      }
      assert.deepEqual(rawIds, pages.rawIds.reverse());
      assert.deepEqual(sim.listRequests(), { keyRequests: 10, pageRequests: 100 });
    });
  });

  it('caps key pages silently at maxCount and refuses counts above refuseCountAbove', async () => {
    await withSimulator({ records: 100, seed: 35, maxCount: 30, refuseCountAbove: 100 }, async (url) => {
      const capped = (await get(`${url}/txs?order=asc&count=100`)).body;
      assert.equal(capped.txs.length, 30);
      assert.equal(capped.hasNextPage, true);
      const refused = await get(`${url}/txs?order=asc&count=101`);
      assert.equal(refused.status, 400);
      assert.deepEqual(refused.body, { error: 'err_invalid_count' });
    });
  });

  it('serves /tx/{ledgerHash} and /minted/{chainTxHash} like the interface spellings', async () => {
    await withSimulator({ records: 200, seed: 36, paging: 'key' }, async (url, sim) => {
      const records = [...sim.records()];
      const mint = records.find((r) => r.action === 'mint' && r.targetChainTxHash)!;
      const one = async (path: string) => {
        const res = await fetch(`${url}${path}`);
        return { status: res.status, text: await res.text() };
      };
      const byHash = await one(`/txsByHash/${records[7]!.ledgerHash}`);
      assert.equal(byHash.status, 200);
      assert.deepEqual(await one(`/tx/${records[7]!.ledgerHash}`), byHash);
      const minted = await one(`/mintedTxByChainTxHash/${mint.targetChainTxHash}`);
      assert.equal(minted.status, 200);
      assert.deepEqual(await one(`/minted/${mint.targetChainTxHash}`), minted);
      assert.deepEqual(await one(`/tx/0x${'1'.repeat(64)}`), {
        status: 404,
        text: '{"error":"err_not_found"}',
      });
      assert.equal((await one('/minted/0x12')).status, 404);
      const posted = await fetch(`${url}/tx`, { method: 'POST', body: '{}' });
      assert.equal(posted.status, 400, 'POST /tx is still the submission');
    });
  });

  it('refuses a bad paging option or count limit at creation', () => {
    assert.throws(
      () => createSimulator({ paging: 'keys' as never }),
      /paging must be one of page, key, both/,
    );
    assert.throws(() => createSimulator({ maxCount: -1 }), /maxCount/);
    assert.throws(() => createSimulator({ refuseCountAbove: 1.5 }), /refuseCountAbove/);
  });
});
