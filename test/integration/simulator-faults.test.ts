import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { checkHash, type SignedRecord } from '../../src/domain/integrity.js';
import { NO_FAULTS } from '../../src/simulator/faults.js';
import { createSimulator } from '../../src/simulator/simulator.js';
import type { Simulator } from '../../src/simulator/types.js';

type Json = Record<string, unknown>;

describe('simulator faults', () => {
  let sim: Simulator;
  let url: string;

  before(async () => {
    sim = createSimulator({ records: 1000, seed: 21 });
    ({ url } = await sim.listen());
  });
  beforeEach(() => {
    sim.setFaults(NO_FAULTS);
  });
  after(() => sim.close());

  it('adds fixed latency and jitter', async () => {
    sim.setFaults({ latencyMs: 120, latencyJitterMs: 40 });
    const started = performance.now();
    const res = await fetch(`${url}/txs`);
    await res.text();
    const took = performance.now() - started;
    assert.equal(res.status, 200);
    assert.ok(took >= 115 && took < 1000, `took ${took} ms`);
  });

  it('answers a share of requests 500 or 503, the 503 sometimes not JSON', async () => {
    sim.setFaults({ errorRate: 1 });
    const statuses = new Set<number>();
    let nonJson = 0;
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${url}/txs`);
      statuses.add(res.status);
      const text = await res.text();
      try {
        JSON.parse(text);
      } catch {
        nonJson++;
      }
    }
    assert.deepEqual([...statuses].sort(), [500, 503]);
    assert.ok(nonJson > 0);
    sim.setFaults({ errorRate: 0.3 });
    let failures = 0;
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${url}/info`);
      await res.arrayBuffer();
      if (res.status >= 500) failures++;
    }
    assert.ok(failures > 30 && failures < 100, `${failures} failures of 200`);
  });

  it('answers a share of requests 429 with Retry-After', async () => {
    sim.setFaults({ rateLimitRate: 1, retryAfterSeconds: 3 });
    const res = await fetch(`${url}/txs?page=2`);
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '3');
    assert.deepEqual(await res.json(), { error: 'err_too_many_requests' });
  });

  it('leaves a share of requests hanging until the client gives up', async () => {
    sim.setFaults({ hangRate: 1 });
    await assert.rejects(fetch(`${url}/txs`, { signal: AbortSignal.timeout(300) }), { name: 'TimeoutError' });
    sim.setFaults({ hangRate: 0 });
    assert.equal((await fetch(`${url}/txs`)).status, 200);
  });

  it('cuts a share of bodies short', async () => {
    const whole = await (await fetch(`${url}/txs?page=3`)).text();
    sim.setFaults({ truncateRate: 1 });
    const res = await fetch(`${url}/txs?page=3`);
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.ok(text.length < whole.length && whole.startsWith(text));
    assert.throws(() => JSON.parse(text), SyntaxError);
  });

  it('serves the same records malformed on every read, and the ground truth names them', async () => {
    sim.setFaults({ malformedRate: 0.1 });
    const expected = [...sim.records()].filter((r) => r.malformed);
    const read = async () => {
      const bad: string[] = [];
      for (let page = 1; page <= 100; page++) {
        const body = (await (await fetch(`${url}/txs?page=${page}`)).json()) as { txs: Json[] };
        for (const tx of body.txs) {
          if (tx.rawId === undefined) bad.push(`${tx.ledgerHash}:missing_raw_id`);
          else if (!/^\d+$/.test(tx.amount as string)) bad.push(`${tx.ledgerHash}:bad_amount`);
          else if (tx.internalStatus !== 'success') {
            try {
              JSON.parse(tx.internalStatus as string);
            } catch {
              bad.push(`${tx.ledgerHash}:broken_internal_status`);
            }
          }
        }
      }
      return bad.sort();
    };
    const first = await read();
    assert.deepEqual(first, expected.map((r) => `${r.ledgerHash}:${r.malformed}`).sort());
    assert.deepEqual(await read(), first);
    assert.ok(new Set(first.map((b) => b.split(':')[1])).size === 3);
  });

  it('serves the same records tampered on every read, and the ground truth names them', async () => {
    const res = await fetch(`${url}/_sim/faults`, { method: 'POST', body: '{"tamperedRate":0.1}' });
    assert.equal(((await res.json()) as Json).tamperedRate, 0.1);
    const expected = [...sim.records()].filter((r) => r.tampered);
    const read = async () => {
      const mismatched: string[] = [];
      for (let page = 1; page <= 100; page++) {
        const body = (await (await fetch(`${url}/txs?page=${page}`)).json()) as { txs: SignedRecord[] };
        for (const tx of body.txs) if (checkHash(tx) === 'mismatch') mismatched.push(`${tx.ledgerHash}`);
      }
      return mismatched.sort();
    };
    const first = await read();
    assert.ok(first.length > 50, `${first.length}`);
    assert.deepEqual(first, expected.map((r) => r.ledgerHash).sort());
    assert.deepEqual(await read(), first);
    const one = expected[0]!;
    const byHash = (await (await fetch(`${url}/txsByHash/${one.ledgerHash}`)).json()) as { tx: Json };
    assert.equal(byHash.tx.amount, one.amount);
    assert.equal(checkHash(byHash.tx as SignedRecord), 'mismatch');
  });

  it('answers 429 to a client over its request budget, and only to that client', async () => {
    sim.setFaults({ requestBudgetPerSecond: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${url}/fees`, { headers: { 'x-client-id': 'busy' } });
      await res.arrayBuffer();
      statuses.push(res.status);
      if (res.status === 429) assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    assert.equal(statuses.filter((s) => s === 200).length, 5);
    assert.equal(statuses.filter((s) => s === 429).length, 3);
    assert.equal((await fetch(`${url}/fees`, { headers: { 'x-client-id': 'quiet' } })).status, 200);
  });

  it('changes faults at run time through the control endpoint, which faults never touch', async () => {
    const set = await fetch(`${url}/_sim/faults`, { method: 'POST', body: JSON.stringify({ errorRate: 1 }) });
    assert.equal(((await set.json()) as Json).errorRate, 1);
    assert.ok((await fetch(`${url}/info`)).status >= 500);
    assert.equal((await fetch(`${url}/_sim/stats`)).status, 200);
    assert.equal(((await (await fetch(`${url}/_sim/faults`)).json()) as Json).errorRate, 1);
    for (const bad of ['{"errorRate": 2}', '{"nope": 1}', '[1]', 'x']) {
      const res = await fetch(`${url}/_sim/faults`, { method: 'POST', body: bad });
      assert.equal(res.status, 400, bad);
    }
    const stats = sim.stats();
    assert.ok((stats['GET /info']?.['500'] ?? 0) + (stats['GET /info']?.['503'] ?? 0) >= 1);
  });
});
