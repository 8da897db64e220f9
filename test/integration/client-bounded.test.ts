import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import {
  clientOptionsFromConfig,
  createLedgerClient,
  type LedgerClient,
  type LedgerClientOptions,
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

function _page(n: number) {
  return { currentPage: n, totalPages: 50, txs: [] };
}

/** A hanging reply that tells when the client went away. */
function _hangUntilClosed(closed: () => void): ScriptedReply {
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
