import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { busiestSecond, forward } from '../helpers/proxy.js';
import { type Setup, setUp, syncToTruth } from '../helpers/redis.js';

const RATE = 10;
/** The shared budget's burst at that rate: a tenth of a second's worth, at least 1. */
const BURST = 1;
/**
 * Stated tolerance, in requests: what the server sees also depends on each request's transit
 * from its worker (a worker stalled between its grant and its send), on top of what this
 * process's own stalls could have stamped together (added where it is measured).
 */
const TRANSIT = 2;
/** The request answered 429 with `Retry-After: 2`. */
const THROTTLED = 40;

describe('three workers share one request budget', () => {
  let proxy: TestHttpServer;
  let setup: Setup | undefined;
  let lateMs = 0;

  // Three worker processes backfill through a proxy that fails every other request with a 503
  // (retried in the workers' clients) and answers one with a 429, counting what arrives.
  before(async () => {
    let target = '';
    proxy = await startHttpServer((request, index) => {
      if (index === THROTTLED) return { status: 429, headers: { 'retry-after': '2' }, body: 'slow down' };
      if (index % 2 === 1) return { status: 503, body: { error: 'err_busy' } };
      return forward(target, request);
    });
    const current = await setUp(
      'worker-budget',
      { records: 400, seed: 41 },
      {
        env: {
          LEDGER_BASE_URL: proxy.baseUrl,
          LEDGER_REQUESTS_PER_SECOND: String(RATE),
          LEDGER_RETRY_MIN_MS: '20',
          LEDGER_RETRY_MAX_MS: '100',
        },
      },
    );
    setup = current;
    target = current.url;
    // Ten range jobs, so that every worker has some.
    const workers = [1, 2, 3].map(() => current.start(['--pages-per-range', '4']));
    await Promise.all(workers.map((w) => w.ready));
    // A request stamped late by this process's own stalls would seem to arrive with later ones.
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    await syncToTruth(current, 90_000);
    loopDelay.disable();
    lateMs = loopDelay.max / 1e6;
  });

  after(async () => {
    await setup?.close();
    await proxy?.close();
  });

  it('every worker sent requests and retried some', () => {
    assert.ok(setup);
    for (const worker of setup.workers) assert.match(worker.log(), /ledger request failed, retrying/);
  });

  it('requests, retries included, stay within the budget in every one-second window', () => {
    const limit = RATE + BURST + TRANSIT + Math.ceil((lateMs * RATE) / 1000);
    const busiest = busiestSecond(proxy.requests.map((r) => r.at));
    assert.ok(proxy.requests.length > 3 * RATE, `only ${proxy.requests.length} requests`);
    assert.ok(
      busiest <= limit,
      `${busiest} requests within one second (limit ${limit}, stalls ${lateMs} ms)`,
    );
  });

  it('requests, retries included, stay within the budget over the whole run', () => {
    // The same bound over the run's whole span, where a stall can only move its two ends.
    const times = proxy.requests.map((r) => r.at);
    const spanMs = Math.max(...times) - Math.min(...times);
    const limit =
      Math.floor((spanMs * RATE) / 1000) + BURST + TRANSIT + Math.ceil((2 * lateMs * RATE) / 1000);
    assert.ok(times.length <= limit, `${times.length} requests in ${Math.round(spanMs)} ms (limit ${limit})`);
  });

  it('a 429 with Retry-After 2 stops every worker for about two seconds', () => {
    const throttledAt = proxy.requests[THROTTLED]?.at ?? 0;
    // Requests already let through may still arrive just after (300 ms, plus this process's
    // stalls); the pause may end early by the time the 429 took to reach its worker (200 ms).
    const during = proxy.requests
      .map((r) => r.at - throttledAt)
      .filter((offset) => offset > 300 + lateMs && offset < 1800);
    assert.deepEqual(during, [], 'requests arrived while the service asked every client to wait');
    assert.ok(
      proxy.requests.some((r) => r.at - throttledAt >= 1800),
      'requests resume after the pause',
    );
  });
});
