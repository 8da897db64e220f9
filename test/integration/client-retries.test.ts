import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import {
  createLedgerClient,
  type LedgerClient,
  type LedgerClientOptions,
  type RequestBudget,
} from '../../src/client/index.js';
import {
  HttpError,
  MalformedResponseError,
  NetworkError,
  RetryWaitTooLongError,
  TimeoutError,
} from '../../src/errors.js';
import { type ScriptedReply, startHttpServer, type TestHttpServer } from '../helpers/http-server.js';

const PAGE = { currentPage: 1, totalPages: 1, txs: [] };

const open: Array<{ client: LedgerClient; server: TestHttpServer }> = [];
after(async () => {
  for (const { client, server } of open) {
    await client.close();
    await server.close();
  }
});

/** A server answering with `replies` in turn, and a client of it with short backoff. */
async function setup(replies: ScriptedReply[], options: Partial<LedgerClientOptions> = {}) {
  const server = await startHttpServer(replies);
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const client = createLedgerClient({
    baseUrl: server.baseUrl,
    retries: 4,
    retryMinMs: 10,
    retryMaxMs: 50,
    requestsPerSecond: 0,
    logger,
    ...options,
  });
  open.push({ client, server });
  return { server, client, logs };
}

describe('transient failures', () => {
  it('retries 500 and 503 until the page comes, and logs each retry at warn', async () => {
    const { client, server, logs } = await setup([
      { status: 500, body: 'oops' },
      { status: 503, body: { error: 'err_busy' } },
      { body: PAGE },
    ]);
    const page = await client.txs({ page: 1 });
    assert.equal(page.currentPage, 1);
    assert.equal(server.requests.length, 3);
    assert.equal(client.stats().retries, 2);
    assert.deepEqual(client.stats().byStatus, { '200': 1, '500': 1, '503': 1 });
    assert.equal(logs.length, 2);
    assert.equal(logs[0]?.['level'], 40);
    assert.equal(logs[0]?.['status'], 500);
    assert.equal(logs[0]?.['attempt'], 1);
    assert.equal(logs[1]?.['status'], 503);
    assert.equal(typeof logs[1]?.['delay_ms'], 'number');
    assert.equal(logs[0]?.['url'], `${server.baseUrl}/txs?page=1`);
  });

  it('gives up after the configured retries with the last HttpError', async () => {
    const { client, server } = await setup([{ status: 502, body: 'bad gateway' }], { retries: 2 });
    await assert.rejects(
      client.info(),
      (error: unknown) => error instanceof HttpError && error.status === 502,
    );
    assert.equal(server.requests.length, 3);
  });

  it('waits at least as long as a 429 Retry-After asks', async () => {
    const { client, server } = await setup([
      { status: 429, headers: { 'retry-after': '1' }, body: { error: 'err_too_many_requests' } },
      { body: PAGE },
    ]);
    const start = performance.now();
    await client.txs();
    const elapsed = performance.now() - start;
    assert.equal(server.requests.length, 2);
    assert.ok(elapsed >= 990, `retried after ${elapsed} ms`);
    const gap = (server.requests[1]?.at ?? 0) - (server.requests[0]?.at ?? 0);
    assert.ok(gap >= 990, `server saw the retry ${gap} ms later`);
    assert.ok(elapsed < 3000, `took ${elapsed} ms`);
  });

  it('ends at once, naming the wait, when Retry-After asks for longer than the longest wait allowed', async () => {
    const { client, server } = await setup(
      [
        { status: 429, headers: { 'retry-after': '86400' }, body: { error: 'err_rate_limited' } },
        { body: PAGE },
      ],
      { maxRetryWaitMs: 120_000 },
    );
    const start = performance.now();
    await assert.rejects(client.txs(), (error: unknown) => {
      assert.ok(error instanceof RetryWaitTooLongError);
      assert.equal(error.waitMs, 86_400_000);
      assert.match(error.message, /asks to wait 86400 s \(24 h\).*LEDGER_MAX_RETRY_WAIT_MS allows \(120 s\)/);
      return true;
    });
    assert.ok(performance.now() - start < 2000, 'no wait at all');
    assert.equal(server.requests.length, 1, 'and no retry before the service said it may');
  });

  it("holds every call of the client for a 429's Retry-After, not only the refused one", async () => {
    const { client, server } = await setup([
      { status: 429, headers: { 'retry-after': '1' } },
      { body: PAGE },
    ]);
    const refused = client.txs({ page: 1 });
    const deadline = performance.now() + 5000;
    while (client.stats().byStatus['429'] !== 1 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const other = client.txs({ page: 2 });
    await Promise.all([refused, other]);
    const [first, ...later] = server.requests;
    assert.deepEqual(later.map((r) => r.query.get('page')).sort(), ['1', '2']);
    for (const request of later) {
      const gap = request.at - (first?.at ?? 0);
      assert.ok(gap >= 990, `page ${request.query.get('page')} went ${gap} ms after the 429`);
    }
  });

  it('tells its budget how long a 429 asked to wait, so the budget can hold other clients', async () => {
    const paused: number[] = [];
    const budget: RequestBudget = { take: async () => {}, pause: (ms) => void paused.push(ms) };
    const { client, server } = await setup(
      [
        { status: 429, headers: { 'retry-after': '0.1' } },
        { status: 429 },
        { status: 429, headers: { 'retry-after': '0' } },
        { body: PAGE },
      ],
      { budget, maxRetryWaitMs: 1000 },
    );
    await client.txs();
    assert.equal(server.requests.length, 4);
    assert.deepEqual(paused, [100], 'only a Retry-After that asks for a wait pauses the budget');
  });

  it('times out a hanging answer and retries it', async () => {
    const { client, server } = await setup([{ hang: true }, { body: PAGE }], { timeoutMs: 300 });
    const start = performance.now();
    const page = await client.txs({ page: 1 });
    const elapsed = performance.now() - start;
    assert.equal(page.totalPages, 1);
    assert.equal(server.requests.length, 2);
    assert.ok(elapsed >= 290, `answered after ${elapsed} ms`);
    assert.equal(client.stats().timeouts, 1);
  });

  it('raises TimeoutError when every attempt hangs', async () => {
    const { client, server } = await setup([{ hang: true }], { timeoutMs: 100, retries: 1 });
    await assert.rejects(client.txs(), (error: unknown) => error instanceof TimeoutError && error.retryable);
    assert.equal(server.requests.length, 2);
  });

  it('retries a dropped connection', async () => {
    const { client, server } = await setup([{ destroy: true }, { body: PAGE }]);
    await client.txs();
    assert.equal(server.requests.length, 2);
    assert.equal(client.stats().networkErrors, 1);
  });

  it('retries a 200 whose body is not JSON, then raises MalformedResponseError', async () => {
    const { client, server } = await setup([{ body: '<html>maintenance</html>' }], { retries: 2 });
    await assert.rejects(
      client.txs(),
      (error: unknown) =>
        error instanceof MalformedResponseError &&
        error.body === '<html>maintenance</html>' &&
        /not JSON/.test(error.message),
    );
    assert.equal(server.requests.length, 3);
    assert.equal(client.stats().malformed, 3);
  });

  it('recovers when a truncated page is followed by a whole one', async () => {
    const { client, server } = await setup([{ body: '{"currentPage":1,"totalPa' }, { body: PAGE }]);
    assert.equal((await client.txs()).totalPages, 1);
    assert.equal(server.requests.length, 2);
  });
});

describe('failures that are not transient', () => {
  it('fails a 400 at once, with the status and the service error text, after one request', async () => {
    const { client, server, logs } = await setup([{ status: 400, body: { error: 'err_x' } }]);
    await assert.rejects(
      client.txs({ action: 'transfer' }),
      (error: unknown) =>
        error instanceof HttpError &&
        error.status === 400 &&
        error.serviceError === 'err_x' &&
        /err_x/.test(error.message) &&
        !error.retryable,
    );
    assert.equal(server.requests.length, 1);
    assert.equal(logs.length, 0);
  });

  it('keeps a non-JSON error body as text', async () => {
    const { client } = await setup([{ status: 403, body: 'forbidden' }]);
    await assert.rejects(
      client.fees(),
      (error: unknown) =>
        error instanceof HttpError && error.body === 'forbidden' && error.serviceError === undefined,
    );
  });

  it('does not resubmit a transaction after a 500, since the service may have acted', async () => {
    const { client, server } = await setup([
      { status: 500, body: { error: 'err_internal' } },
      { body: { status: 'ok' } },
    ]);
    await assert.rejects(
      client.submitTx({ action: 'transfer' }),
      (error: unknown) => error instanceof HttpError,
    );
    assert.equal(server.requests.length, 1);
  });

  it('resubmits a transaction refused with 429, since the service did not act', async () => {
    const { client, server } = await setup([
      { status: 429, headers: { 'retry-after': '0' } },
      { body: { status: 'ok' } },
    ]);
    const result = await client.submitTx({ action: 'transfer', amount: '10' });
    assert.equal(result.status, 'ok');
    assert.equal(server.requests.length, 2);
    assert.equal(server.requests[1]?.method, 'POST');
    assert.deepEqual(JSON.parse(server.requests[1]?.body ?? ''), { action: 'transfer', amount: '10' });
    assert.equal(server.requests[1]?.headers['content-type'], 'application/json');
  });

  it('retries a refused connection, even for a transaction, since nothing was sent', async () => {
    const server = await startHttpServer([{ body: {} }]);
    const baseUrl = server.baseUrl;
    await server.close();
    const client = createLedgerClient({
      baseUrl,
      retries: 2,
      retryMinMs: 5,
      retryMaxMs: 10,
      requestsPerSecond: 0,
    });
    await assert.rejects(client.txs(), (error: unknown) => error instanceof NetworkError && error.retryable);
    await assert.rejects(client.submitTx({ action: 'transfer' }), NetworkError);
    assert.equal(client.stats().requests, 6);
    assert.equal(client.stats().networkErrors, 6);
    await client.close();
  });

  it('stops waiting and retrying when the caller aborts', async () => {
    const { client, server } = await setup([{ status: 503 }], { retryMinMs: 5000, retryMaxMs: 5000 });
    const controller = new AbortController();
    const call = client.txs({}, { signal: controller.signal });
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const start = performance.now();
    controller.abort(new Error('shutting down'));
    await assert.rejects(call, /shutting down/);
    assert.ok(performance.now() - start < 1000);
    assert.equal(server.requests.length, 1);
  });
});
