import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import {
  clientOptionsFromConfig,
  createLedgerClient,
  createRequestBudget,
  type LedgerClient,
  type LedgerClientOptions,
  type RequestBudget,
} from '../../src/client/index.js';
import { loadConfig } from '../../src/config.js';
import { MalformedResponseError, ResponseTooLargeError, TimeoutError } from '../../src/errors.js';
import {
  type ScriptedReply,
  type ScriptHandler,
  startHttpServer,
  type TestHttpServer,
} from '../helpers/http-server.js';
import { endlessBody, trickleBody } from '../helpers/slow-bodies.js';

const open: Array<{ client: LedgerClient; server: TestHttpServer }> = [];
after(async () => {
  for (const { client, server } of open) {
    await client.close();
    await server.close();
  }
});

async function setup(script: ScriptedReply[] | ScriptHandler, options: Partial<LedgerClientOptions> = {}) {
  const server = await startHttpServer(script);
  const client = createLedgerClient({
    baseUrl: server.baseUrl,
    retries: 2,
    retryMinMs: 5,
    retryMaxMs: 10,
    requestsPerSecond: 0,
    ...options,
  });
  open.push({ client, server });
  return { server, client };
}

function page(n: number) {
  return { currentPage: n, totalPages: 50, txs: [] };
}

/** A hanging reply that tells when the client went away. */
function hangUntilClosed(closed: () => void): ScriptedReply {
  return { respond: (res: ServerResponse) => res.on('close', closed) };
}

describe('a total deadline per request', () => {
  it('fails a body trickling in a byte every 500 ms at the deadline, and retries it', {
    timeout: 30_000,
  }, async () => {
    const { client, server } = await setup([{ respond: trickleBody(500) }], { timeoutMs: 1500, retries: 1 });
    const start = performance.now();
    await assert.rejects(client.txs(), (error: unknown) => error instanceof TimeoutError && error.retryable);
    const elapsed = performance.now() - start;
    assert.equal(server.requests.length, 2);
    assert.equal(client.stats().timeouts, 2);
    assert.ok(elapsed >= 2900, `failed after ${elapsed} ms`);
    assert.ok(elapsed < 15_000, `failed after ${elapsed} ms`);
  });
});

describe('a maximum body size', () => {
  it('cuts off a 200 body that never ends at the limit, and retries it', { timeout: 30_000 }, async () => {
    const { client, server } = await setup([{ respond: endlessBody(256 * 1024 * 1024) }], {
      maxBodyBytes: 1024 * 1024,
      timeoutMs: 20_000,
    });
    await assert.rejects(
      client.txs(),
      (error: unknown) =>
        error instanceof ResponseTooLargeError &&
        error instanceof MalformedResponseError &&
        error.retryable &&
        /larger than 1048576 bytes/.test(error.message),
    );
    assert.equal(server.requests.length, 3);
    assert.equal(client.stats().tooLarge, 3);
  });
});

describe('one retry budget for every transient failure', () => {
  const fromSettings = (baseUrl: string) =>
    createLedgerClient({
      ...clientOptionsFromConfig(
        loadConfig({
          LEDGER_BASE_URL: baseUrl,
          LEDGER_RETRIES: '4',
          LEDGER_RETRY_MIN_MS: '5',
          LEDGER_RETRY_MAX_MS: '10',
          LEDGER_REQUESTS_PER_SECOND: '0',
        }),
      ),
    });

  it('gives a truncated or non-JSON page as many retries (LEDGER_RETRIES) as a 503', async () => {
    const replies: Record<string, ScriptedReply> = {
      '503': { status: 503, body: { error: 'err_busy' } },
      truncated: { body: '{"currentPage":1,"totalPa' },
      'not JSON': { body: '<html>maintenance</html>' },
    };
    const requests: Record<string, number> = {};
    for (const [kind, reply] of Object.entries(replies)) {
      const server = await startHttpServer([reply]);
      const client = fromSettings(server.baseUrl);
      open.push({ client, server });
      await assert.rejects(client.txs());
      requests[kind] = server.requests.length;
    }
    assert.deepEqual(requests, { '503': 5, truncated: 5, 'not JSON': 5 });
  });
});

describe('hedging a slow page', () => {
  /** A budget that counts what it hands out. */
  function countingBudget(): RequestBudget & { taken: number } {
    const inner = createRequestBudget({ requestsPerSecond: 1000, burst: 100 });
    const budget = {
      taken: 0,
      take: async (signal?: Parameters<RequestBudget['take']>[0]) => {
        await inner.take(signal);
        budget.taken += 1;
      },
    };
    return budget;
  }

  it('answers from a second request when the first hangs, aborting the first', {
    timeout: 30_000,
  }, async () => {
    let hungClosed = false;
    const budget = countingBudget();
    const { client, server } = await setup(
      (request) => {
        const n = Number(request.query.get('page'));
        const seen = server.requests.filter((r) => r.query.get('page') === String(n)).length;
        return n === 11 && seen === 1 ? hangUntilClosed(() => (hungClosed = true)) : { body: page(n) };
      },
      { timeoutMs: 60_000, hedgeAfter: 3, hedgeMinMs: 100, budget },
    );
    for (let n = 1; n <= 10; n += 1) await client.txs({ page: n });
    const start = performance.now();
    const answer = await client.txs({ page: 11 });
    const elapsed = performance.now() - start;
    assert.equal(answer.currentPage, 11);
    assert.ok(elapsed < 10_000, `page 11 took ${elapsed} ms`);
    assert.equal(server.requests.filter((r) => r.query.get('page') === '11').length, 2);
    assert.equal(client.stats().hedges, 1);
    assert.equal(client.stats().requests, 12);
    assert.equal(budget.taken, 12);
    const deadline = Date.now() + 5000;
    while (!hungClosed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(hungClosed, 'the hanging request was aborted');
  });

  it("stops both requests at once when the caller's signal aborts", { timeout: 30_000 }, async () => {
    let closed = 0;
    const { client, server } = await setup(
      (request) =>
        request.query.get('page') === '9' ? hangUntilClosed(() => (closed += 1)) : { body: page(1) },
      { timeoutMs: 60_000, hedgeAfter: 3, hedgeMinMs: 50, retryMinMs: 5000, retryMaxMs: 5000 },
    );
    for (let n = 1; n <= 8; n += 1) await client.txs({ page: n });
    const controller = new AbortController();
    const call = client.txs({ page: 9 }, { signal: controller.signal });
    const deadline = Date.now() + 10_000;
    while (server.requests.length < 10 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(server.requests.length, 10, 'the slow page was hedged');
    const start = performance.now();
    controller.abort(new Error('shutting down'));
    await assert.rejects(call, /shutting down/);
    assert.ok(performance.now() - start < 1000);
    while (closed < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(closed, 2);
    assert.equal(server.requests.length, 10);
  });
});
