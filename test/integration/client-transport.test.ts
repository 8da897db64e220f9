import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, describe, it } from 'node:test';
import {
  createLedgerClient,
  createRequestBudget,
  type LedgerClient,
  type RequestBudget,
} from '../../src/client/index.js';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';

const PAGE = { currentPage: 1, totalPages: 1, txs: [] };

const open: Array<{ client: LedgerClient; server: TestHttpServer }> = [];
after(async () => {
  for (const { client, server } of open) {
    await client.close();
    await server.close();
  }
});

describe('request budget', () => {
  it('holds 200 concurrent calls to 100 requests a second, fairly', async () => {
    const server = await startHttpServer(() => ({ body: PAGE }));
    // The client's own budget, watched: when each call was let through.
    const inner = createRequestBudget({ requestsPerSecond: 100, burst: 10 });
    const released: number[] = [];
    let taken = 0;
    const budget: RequestBudget = {
      take: (signal) => {
        const index = taken++;
        return inner.take(signal).then(() => {
          released[index] = performance.now();
        });
      },
    };
    const client = createLedgerClient({ baseUrl: server.baseUrl, budget });
    open.push({ client, server });

    // How late this process ran its callbacks: a timestamp taken in a callback can be that late.
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const start = performance.now();
    await Promise.all(Array.from({ length: 200 }, (_, i) => client.txs({ page: i + 1 })));
    const elapsed = performance.now() - start;
    loopDelay.disable();
    const lateMs = loopDelay.max / 1e6;

    assert.equal(server.requests.length, 200);
    // 190 requests past the burst at 100/s.
    assert.ok(elapsed >= 1850, `200 calls took ${elapsed} ms`);
    const sent = busiestSecond(released);
    // A stamp is taken a promise hop after the budget's timer: behind the other calls' callbacks of
    // the same turn as well as the timer's own lateness, so up to about twice what the monitor saw
    // on a loaded machine. A budget that let calls through even 10 % too fast would pass 120.
    assert.ok(
      sent <= 110 + Math.ceil((2 * lateMs * 100) / 1000),
      `${sent} requests went out within one second (callbacks up to ${lateMs} ms late)`,
    );
    for (let i = 1; i < released.length; i++) {
      assert.ok((released[i] ?? 0) >= (released[i - 1] ?? 0), 'calls go out in the order they were made');
    }
    // What the server sees also depends on transit: a request sent before a window may arrive
    // inside it. Allow exactly the longest transit measured, at the budget's rate.
    let transit = 0;
    for (const request of server.requests) {
      const sent = released[Number(request.query.get('page')) - 1] ?? 0;
      transit = Math.max(transit, request.at - sent);
    }
    const arrived = busiestSecond(server.requests.map((r) => r.at));
    assert.ok(
      arrived <= 110 + Math.ceil((transit * 100) / 1000),
      `the server saw ${arrived} requests within one second (longest transit ${transit} ms)`,
    );
  });
});

/** The most timestamps (ms) within any one second. */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let busiest = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[j] ?? Infinity) <= (sorted[i] ?? 0) - 1000) j++;
    busiest = Math.max(busiest, i - j + 1);
  }
  return busiest;
}

describe('connections', () => {
  it('reuse kept-alive sockets: 100 sequential calls open at most 2', async () => {
    const server = await startHttpServer(() => ({ body: PAGE }));
    const client = createLedgerClient({ baseUrl: server.baseUrl, requestsPerSecond: 0 });
    open.push({ client, server });
    for (let i = 0; i < 100; i++) await client.txs({ page: 1 });
    assert.equal(server.requests.length, 100);
    assert.ok(server.connectionCount() <= 2, `${server.connectionCount()} sockets opened`);
    assert.equal(client.stats().requests, 100);
  });

  it('open no more sockets than configured under concurrent calls', async () => {
    const server = await startHttpServer(() => ({ body: PAGE, delayMs: 2 }));
    // Hedging off: on a loaded machine queued calls look slow, and an aborted second request
    // closes its socket, which is hedging's cost, not the pool's limit under test here.
    const client = createLedgerClient({
      baseUrl: server.baseUrl,
      requestsPerSecond: 0,
      connections: 4,
      hedgeAfter: 0,
    });
    open.push({ client, server });
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 100 }, () => client.txs()));
    }
    assert.equal(server.requests.length, 300);
    assert.ok(server.connectionCount() <= 4, `${server.connectionCount()} sockets opened`);
  });

  it('refuses calls after close', async () => {
    const server = await startHttpServer(() => ({ body: PAGE }));
    const client = createLedgerClient({ baseUrl: server.baseUrl, requestsPerSecond: 0 });
    open.push({ client, server });
    await client.txs();
    await client.close();
    await assert.rejects(client.txs(), /closed/);
    assert.equal(server.requests.length, 1);
  });
});
