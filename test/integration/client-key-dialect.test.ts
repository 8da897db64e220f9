import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import {
  clientOptionsFromConfig,
  createLedgerClient,
  type LedgerClient,
  type LedgerClientOptions,
} from '../../src/client/index.js';
import { loadConfig } from '../../src/config.js';
import { HttpError, MalformedResponseError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { type ScriptHandler, startHttpServer, type TestHttpServer } from '../helpers/http-server.js';

function record(rawId: number): Record<string, unknown> {
  return {
    rawId,
    id: 'batch-1',
    tokenSymbol: 'ETH',
    action: 'transfer',
    from: '0xA11ce',
    to: '0xB0b',
    amount: '1000',
    fee: '0',
    feeRecipient: '0xfee',
    nonce: 1_700_000_000_000 + rawId,
    tokenID: '0x0000000000000000000000000000000000000000',
    chainType: 'ethereum',
    chainID: '1',
    data: '',
    version: 'v1',
    sig: '0xsig',
    ledgerHash: `0xhash${rawId}`,
    status: 'packaged',
    internalStatus: '{"status":"success"}',
    timestamp: 1_700_000_000_000,
    targetChainTxHash: '',
    express: { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' },
  };
}

/** Records after `cursor`, ascending, `count` of them at most, out of 1..`total`. */
function keyAnswer(query: URLSearchParams, total: number, cap = Number.POSITIVE_INFINITY) {
  const cursor = Number(query.get('cursor') ?? 0);
  const count = Math.min(Number(query.get('count') ?? 10), cap);
  const txs: Array<Record<string, unknown>> = [];
  for (let rawId = cursor + 1; rawId <= total && txs.length < count; rawId++) txs.push(record(rawId));
  const last = txs.at(-1)?.['rawId'];
  return { txs, hasNextPage: typeof last === 'number' && last < total };
}

const servers: TestHttpServer[] = [];
const clients: LedgerClient[] = [];
after(async () => {
  for (const client of clients) await client.close();
  for (const server of servers) await server.close();
});

async function serve(handler: ScriptHandler): Promise<TestHttpServer> {
  const server = await startHttpServer(handler);
  servers.push(server);
  return server;
}

function connect(options: LedgerClientOptions): LedgerClient {
  const client = createLedgerClient({ retries: 1, retryMinMs: 5, requestsPerSecond: 0, ...options });
  clients.push(client);
  return client;
}

/** A logger whose warnings land in `logs`. */
function captured(): { logs: Array<Record<string, unknown>>; logger: Logger } {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  return { logs, logger };
}

const notFound = { status: 404, body: { error: 'err_not_found' } };

describe('detecting the list dialect', () => {
  it('takes a key-only server (it answers {txs, hasNextPage} whatever page says) for key, in one request', async () => {
    const server = await serve((request) => ({ body: keyAnswer(request.query, 30) }));
    const client = connect({ baseUrl: server.baseUrl });
    assert.equal(await client.detectPaging(), 'key');
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/txs?order=desc&count=1'],
    );
    assert.equal(client.stats().keyRequests, 1);
    // Asked by page number, such a server's answer is no page: an error, never a loop.
    await assert.rejects(client.txs({ page: 2 }), MalformedResponseError);
  });

  it('takes a page-only server that ignores cursor and count for page', async () => {
    const server = await serve(() => ({ body: { currentPage: 1, totalPages: 7, txs: [record(70)] } }));
    const client = connect({ baseUrl: server.baseUrl });
    assert.equal(await client.detectPaging(), 'page');
    assert.equal(server.requests.length, 1);
  });

  it('calls an answer of neither dialect malformed', async () => {
    const server = await serve(() => ({ body: { txs: [] } }));
    const client = connect({ baseUrl: server.baseUrl });
    await assert.rejects(client.detectPaging(), MalformedResponseError);
    assert.equal(server.requests.length, 2, 'retried like any malformed answer');
  });

  it('answers the configured dialect without asking, and asks once under auto', async () => {
    const server = await serve((request) => ({ body: keyAnswer(request.query, 3) }));
    const fixed = connect({ baseUrl: server.baseUrl, paging: 'page' });
    assert.equal(await fixed.listDialect(), 'page');
    assert.equal(server.requests.length, 0);
    const auto = connect({ baseUrl: server.baseUrl });
    assert.equal(await auto.listDialect(), 'key');
    assert.equal(await auto.listDialect(), 'key');
    assert.equal(server.requests.length, 1);
  });
});

describe('key paging', () => {
  it('sends cursor only when > 0, order in lower case, and the client count by default', async () => {
    const server = await serve((request) => ({ body: keyAnswer(request.query, 250) }));
    const client = connect({ baseUrl: server.baseUrl });
    const first = await client.txsByKey({ order: 'asc', cursor: 0 });
    assert.equal(first.count, 100);
    assert.equal(first.txs.length, 100);
    assert.equal(first.hasNextPage, true);
    const next = await client.txsByKey({ order: 'asc', cursor: 100, count: 20, tokenTag: 'eth-eth-0x0' });
    assert.equal(next.txs[0]?.rawId, 101);
    await client.txsByKey({ order: 'desc', action: 'mint', withoutAction: '' });
    assert.deepEqual(
      server.requests.map((r) => r.url),
      [
        '/txs?order=asc&count=100',
        '/txs?cursor=100&order=asc&count=20&tokenTag=eth-eth-0x0',
        '/txs?order=desc&count=100&action=mint',
      ],
    );
    assert.equal(client.stats().keyRequests, 3);
    assert.equal(client.stats().pageRequests, 0);
    // txsAfter stays: ascending after its cursor.
    await client.txsAfter({ cursor: 10, count: 2 });
    assert.equal(server.requests.at(-1)?.url, '/txs?cursor=10&order=asc&count=2');
  });

  it('halves a refused count, keeps the accepted one and says so once', async () => {
    const server = await serve((request) =>
      Number(request.query.get('count')) > 50
        ? { status: 400, body: { error: 'err_invalid_count' } }
        : { body: keyAnswer(request.query, 500) },
    );
    const { logs, logger } = captured();
    const client = connect({ baseUrl: server.baseUrl, logger });
    const page = await client.txsByKey({ order: 'asc' });
    assert.equal(page.count, 50);
    assert.equal(page.txs.length, 50);
    assert.equal(client.keyCount(), 50);
    const next = await client.txsByKey({ order: 'asc', cursor: 50 });
    assert.equal(next.count, 50);
    assert.deepEqual(
      server.requests.map((r) => r.query.get('count')),
      ['100', '50', '50'],
    );
    const warnings = logs.filter((line) => line['level'] === 40);
    assert.equal(warnings.length, 1, JSON.stringify(logs));
    assert.equal(warnings[0]?.['asked'], 100);
    assert.equal(warnings[0]?.['accepted'], 50);
    assert.equal(client.stats().retries, 0, 'a refused count is no failed request');
  });

  it('fails with the 400 once the count is down to 10', async () => {
    const server = await serve(() => ({ status: 400, body: { error: 'err_invalid_cursor' } }));
    const client = connect({ baseUrl: server.baseUrl });
    await assert.rejects(
      client.txsByKey({ order: 'asc', cursor: 5 }),
      (error: unknown) => error instanceof HttpError && error.status === 400,
    );
    assert.deepEqual(
      server.requests.map((r) => r.query.get('count')),
      ['100', '50', '25', '12', '10'],
    );
    assert.equal(client.keyCount(), 100, 'nothing was accepted');
  });

  it('passes a silent cap through: fewer records than asked while hasNextPage is true', async () => {
    const server = await serve((request) => ({ body: keyAnswer(request.query, 100, 30) }));
    const client = connect({ baseUrl: server.baseUrl });
    const page = await client.txsByKey({ order: 'asc' });
    assert.equal(page.txs.length, 30);
    assert.equal(page.hasNextPage, true);
    assert.equal(page.count, 100);
    assert.equal(client.keyCount(), 100);
    const last = page.txs.at(-1)?.rawId;
    const next = await client.txsByKey({ order: 'asc', cursor: last });
    assert.equal(next.txs[0]?.rawId, 31);
  });

  it('puts a key page with bad records in rejected and calls one without hasNextPage malformed', async () => {
    const server = await serve((request) =>
      request.query.get('cursor') === null
        ? { body: { txs: [record(1), { ...record(2), fee: -1 }], hasNextPage: false } }
        : { body: { txs: [record(3)] } },
    );
    const client = connect({ baseUrl: server.baseUrl });
    const page = await client.txsByKey({ order: 'asc' });
    assert.deepEqual(
      page.txs.map((tx) => tx.rawId),
      [1],
    );
    assert.equal(page.rejected.length, 1);
    await assert.rejects(client.txsByKey({ order: 'asc', cursor: 2 }), MalformedResponseError);
    assert.equal(server.requests.length, 3, 'the malformed answer was asked twice');
  });
});

describe('account lists by key', () => {
  it('asks /txs?address= first', async () => {
    const server = await serve((request) =>
      request.rawPath === '/txs' ? { body: keyAnswer(request.query, 2) } : notFound,
    );
    const client = connect({ baseUrl: server.baseUrl });
    await client.txsByKey({ order: 'desc', account: '0xA11ce', count: 10 });
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/txs?order=desc&count=10&address=0xA11ce'],
    );
  });

  it('falls back to /txs/{account} on a 404 and keeps asking that form', async () => {
    const server = await serve((request) =>
      request.rawPath.startsWith('/txs/') ? { body: keyAnswer(request.query, 2) } : notFound,
    );
    const client = connect({ baseUrl: server.baseUrl });
    const page = await client.txsByKey({ order: 'asc', account: 'eid-1', cursor: 1 });
    assert.deepEqual(
      page.txs.map((tx) => tx.rawId),
      [2],
    );
    await client.txsByKey({ order: 'asc', account: 'eid-2' });
    assert.deepEqual(
      server.requests.map((r) => r.url),
      [
        '/txs?cursor=1&order=asc&count=100&address=eid-1',
        '/txs/eid-1?cursor=1&order=asc&count=100',
        '/txs/eid-2?order=asc&count=100',
      ],
    );
    assert.equal(client.stats().keyRequests, 3);
  });

  it("reads /txs/{account} when address= answers with other accounts' records (a service that ignores it)", async () => {
    // The global list for any address=; the account's own list at /txs/{account}.
    const server = await serve((request) => {
      if (request.rawPath === '/txs') return { body: keyAnswer(request.query, 5) };
      if (request.rawPath === '/txs/eid-9') {
        const answer = keyAnswer(request.query, 3);
        return { body: { ...answer, txs: answer.txs.map((tx) => ({ ...tx, to: 'EID-9' })) } };
      }
      return notFound;
    });
    const client = connect({ baseUrl: server.baseUrl });
    const page = await client.txsByKey({ order: 'asc', account: 'eid-9' });
    assert.deepEqual(
      page.txs.map((tx) => [tx.rawId, tx.to]),
      [
        [1, 'EID-9'],
        [2, 'EID-9'],
        [3, 'EID-9'],
      ],
    );
    await client.txsByKey({ order: 'asc', account: 'eid-9', cursor: 3 });
    assert.deepEqual(
      server.requests.map((r) => r.url),
      [
        '/txs?order=asc&count=100&address=eid-9',
        '/txs/eid-9?order=asc&count=100',
        '/txs/eid-9?cursor=3&order=asc&count=100',
      ],
    );
  });

  it('keeps address= when it lists other accounts and /txs/{account} is not found', async () => {
    const server = await serve((request) =>
      request.rawPath === '/txs' ? { body: keyAnswer(request.query, 2) } : notFound,
    );
    const client = connect({ baseUrl: server.baseUrl });
    const page = await client.txsByKey({ order: 'asc', account: 'eid-9' });
    assert.deepEqual(
      page.txs.map((tx) => tx.rawId),
      [1, 2],
    );
    await client.txsByKey({ order: 'asc', account: 'eid-9', cursor: 2 });
    assert.deepEqual(
      server.requests.map((r) => r.url),
      [
        '/txs?order=asc&count=100&address=eid-9',
        '/txs/eid-9?order=asc&count=100',
        '/txs?cursor=2&order=asc&count=100&address=eid-9',
      ],
    );
  });

  it('asks only the configured form when one is set', async () => {
    const server = await serve(() => notFound);
    const client = connect({ baseUrl: server.baseUrl, accountLists: 'path' });
    await assert.rejects(
      client.txsByKey({ order: 'asc', account: 'eid-1' }),
      (error: unknown) => error instanceof HttpError && error.status === 404,
    );
    assert.deepEqual(
      server.requests.map((r) => r.rawPath),
      ['/txs/eid-1'],
    );
  });
});

describe('the list host', () => {
  it('serves lists and look-ups from LEDGER_LIST_URL, /info and POST /tx from LEDGER_BASE_URL', async () => {
    const main = await serve((request) =>
      request.rawPath === '/info' ? { body: { tokenList: [] } } : { body: { status: 'ok' } },
    );
    const lists = await serve((request) => {
      if (request.rawPath === '/txs' && request.query.has('page'))
        return { body: { currentPage: 1, totalPages: 1, txs: [record(1)] } };
      if (request.rawPath === '/txs') return { body: keyAnswer(request.query, 3) };
      if (request.rawPath.startsWith('/txsByAccount/'))
        return { body: { currentPage: 1, totalPages: 1, txs: [] } };
      return { body: { tx: record(1) } };
    });
    const config = loadConfig({ LEDGER_BASE_URL: main.baseUrl, LEDGER_LIST_URL: lists.baseUrl });
    const client = connect({ ...clientOptionsFromConfig(config), retries: 1, requestsPerSecond: 0 });
    assert.equal(client.listUrl, lists.baseUrl);
    await client.info();
    await client.submitTx({ any: 1 });
    await client.txs({ page: 1 });
    await client.txsByAccount('eid-1', { page: 1 });
    await client.txsByKey({ order: 'asc' });
    await client.detectPaging();
    await client.txsByHash('0xhash1');
    await client.mintedTxByChainTxHash('0xchain');
    assert.deepEqual(
      main.requests.map((r) => `${r.method} ${r.rawPath}`),
      ['GET /info', 'POST /tx'],
    );
    assert.deepEqual(
      lists.requests.map((r) => r.rawPath),
      ['/txs', '/txsByAccount/eid-1', '/txs', '/txs', '/txsByHash/0xhash1', '/mintedTxByChainTxHash/0xchain'],
    );
    const stats = client.stats();
    assert.equal(stats.requests, 8);
    assert.equal(stats.byStatus['200'], 8);
    assert.deepEqual([stats.pageRequests, stats.keyRequests], [2, 2]);
  });

  it('uses the base URL for everything when LEDGER_LIST_URL is unset', async () => {
    const server = await serve(() => ({ body: { currentPage: 1, totalPages: 1, txs: [] } }));
    const client = connect(clientOptionsFromConfig(loadConfig({ LEDGER_BASE_URL: server.baseUrl })));
    assert.equal(client.listUrl, server.baseUrl);
    await client.txs();
    assert.equal(server.requests.length, 1);
  });

  it('spells the look-ups as deployments do with LEDGER_LOOKUPS=deployed, LEDGER_PATHS still first', async () => {
    const server = await serve(() => ({ body: { tx: record(1) } }));
    const deployed = connect(
      clientOptionsFromConfig(loadConfig({ LEDGER_BASE_URL: server.baseUrl, LEDGER_LOOKUPS: 'deployed' })),
    );
    await deployed.txsByHash('0xhash1');
    await deployed.mintedTxByChainTxHash('0xchain');
    const overridden = connect(
      clientOptionsFromConfig(
        loadConfig({
          LEDGER_BASE_URL: server.baseUrl,
          LEDGER_LOOKUPS: 'deployed',
          LEDGER_PATHS: '{"txsByHash":"/v2/hash/{ledgerHash}"}',
        }),
      ),
    );
    await overridden.txsByHash('0xhash1');
    await overridden.mintedTxByChainTxHash('0xchain');
    assert.deepEqual(
      server.requests.map((r) => r.rawPath),
      ['/tx/0xhash1', '/minted/0xchain', '/v2/hash/0xhash1', '/minted/0xchain'],
    );
  });
});

describe('many requests under one signal', () => {
  it('keeps thirty requests in flight on one signal without a leak warning, and stops them all with it', async () => {
    const server = await serve((request) => ({ body: keyAnswer(request.query, 5_000), delayMs: 50 }));
    const client = connect({ baseUrl: server.baseUrl, connections: 32 });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const stop = new AbortController();
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          client.txsByKey({ order: 'asc', cursor: i * 100, count: 100 }, { signal: stop.signal }),
        ),
      );
      assert.equal(answers.length, 30);
      const stopped = Array.from({ length: 30 }, (_, i) =>
        client.txsByKey({ order: 'asc', cursor: i * 100, count: 100 }, { signal: stop.signal }),
      );
      const reason = new Error('stopped');
      setTimeout(() => stop.abort(reason), 10);
      const outcomes = await Promise.allSettled(stopped);
      assert.ok(outcomes.every((o) => o.status === 'rejected' && o.reason === reason));
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((name) => name === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });
});
