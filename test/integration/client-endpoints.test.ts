import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createFetchByHash, createFetchPage } from '../../src/app/sync-adapters.js';
import {
  createLedgerClient,
  isNotFound,
  type LedgerClient,
  type LedgerClientOptions,
} from '../../src/client/index.js';
import { HttpError, InvalidRecordError } from '../../src/errors.js';
import { type ScriptHandler, startHttpServer, type TestHttpServer } from '../helpers/http-server.js';

function record(rawId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    rawId,
    id: 'batch-1',
    tokenSymbol: 'ETH',
    action: 'transfer',
    from: 'eid-a_b,c',
    to: '0xB0b',
    amount: '1000000000000000000',
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
    ...overrides,
  };
}

const open: Array<{ client: LedgerClient; server: TestHttpServer }> = [];
after(async () => {
  for (const { client, server } of open) {
    await client.close();
    await server.close();
  }
});

async function setup(handler: ScriptHandler, options: Partial<LedgerClientOptions> = {}) {
  const server = await startHttpServer(handler);
  const client = createLedgerClient({
    baseUrl: server.baseUrl,
    retries: 1,
    retryMinMs: 5,
    requestsPerSecond: 0,
    ...options,
  });
  open.push({ client, server });
  return { client, server };
}

const notFound = { status: 404, body: { error: 'err_not_found' } };

describe('account transaction lists', () => {
  it('falls back to /txs/{account} on 404 and remembers the shape that works', async () => {
    const { client, server } = await setup((request) =>
      request.rawPath.startsWith('/txs/')
        ? { body: { accid: request.path.slice(5), currentPage: 1, totalPages: 1, txs: [record(7)] } }
        : notFound,
    );
    const first = await client.txsByAccount('eid-1');
    assert.equal(first.accid, 'eid-1');
    assert.deepEqual(
      server.requests.map((r) => r.rawPath),
      ['/txsByAccount/eid-1', '/txs/eid-1'],
    );
    await client.txsByAccount('eid-2', { page: 2 });
    assert.equal(server.requests.length, 3, 'the second call makes one request');
    assert.equal(server.requests[2]?.url, '/txs/eid-2?page=2');
  });

  it('starts with the configured shape and falls back to the documented one', async () => {
    const { client, server } = await setup(
      (request) =>
        request.rawPath.startsWith('/txsByAccount/')
          ? { body: { currentPage: 1, totalPages: 0, txs: null } }
          : notFound,
      { paths: { txsByAccount: '/txs/{account}' } },
    );
    const page = await client.txsByAccount('acc');
    assert.deepEqual(page.txs, []);
    assert.deepEqual(
      server.requests.map((r) => r.rawPath),
      ['/txs/acc', '/txsByAccount/acc'],
    );
    await client.txsByAccount('acc');
    assert.equal(server.requests.length, 3);
  });

  it('reports the 404 when no shape knows the account list', async () => {
    const { client, server } = await setup(() => notFound);
    await assert.rejects(client.txsByAccount('x'), (error: unknown) => isNotFound(error));
    assert.equal(server.requests.length, 2);
  });

  it('encodes account ids with - _ , and the query values', async () => {
    const { client, server } = await setup(() => ({ body: { currentPage: 3, totalPages: 3, txs: [] } }));
    await client.txsByAccount('eid-a_b,c', {
      page: 3,
      tokenTag: 'arweave,ethereum-ar-AR,0x4fad',
      action: 'transfer',
      withoutAction: 'mint',
    });
    const seen = server.requests[0];
    assert.equal(seen?.rawPath, '/txsByAccount/eid-a_b%2Cc');
    assert.equal(seen?.path, '/txsByAccount/eid-a_b,c');
    assert.equal(seen?.query.get('tokenTag'), 'arweave,ethereum-ar-AR,0x4fad');
    assert.equal(seen?.query.get('page'), '3');
    assert.equal(seen?.query.get('action'), 'transfer');
    assert.equal(seen?.query.get('withoutAction'), 'mint');
    assert.match(seen?.url ?? '', /tokenTag=arweave%2Cethereum-ar-AR%2C0x4fad/);
  });

  it('returns the good records of a page with one malformed record, and that one as rejected', async () => {
    const { client } = await setup(() => ({
      body: { currentPage: 1, totalPages: 1, txs: [record(3), record(2, { amount: '1.5' }), record(1)] },
    }));
    const page = await client.txs();
    assert.deepEqual(
      page.txs.map((tx) => tx.rawId),
      [3, 1],
    );
    assert.equal(page.rejected.length, 1);
    assert.equal(page.rejected[0]?.rawId, 2);
    assert.match(page.rejected[0]?.reason ?? '', /amount/);
  });

  it('serves the sync engine through createFetchPage', async () => {
    const { client, server } = await setup(() => ({
      body: { currentPage: 4, totalPages: 9, txs: [record(1)] },
    }));
    const fetchPage = createFetchPage(client);
    await fetchPage({}, 4);
    await fetchPage({ account: 'eid-9', tokenTag: 't', withoutAction: 'bundle' }, 2);
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/txs?page=4', '/txsByAccount/eid-9?page=2&tokenTag=t&withoutAction=bundle'],
    );
  });
});

describe('single look-ups', () => {
  it('return the validated record, on configured paths such as /tx/{hash}', async () => {
    const { client, server } = await setup(
      (request) =>
        request.path === '/tx/0xhash5' || request.path === '/minted/0xchain'
          ? { body: { tx: record(5) } }
          : notFound,
      { paths: { txsByHash: '/tx/{ledgerHash}', mintedTxByChainTxHash: '/minted/{chainTxHash}' } },
    );
    assert.equal((await client.txsByHash('0xhash5')).rawId, 5);
    assert.equal((await client.mintedTxByChainTxHash('0xchain')).ledgerHash, '0xhash5');
    assert.equal(server.requests.length, 2);
  });

  it('raise a 404 HttpError for an unknown hash, without retrying', async () => {
    const { client, server } = await setup(() => notFound);
    await assert.rejects(
      client.txsByHash('0xmissing'),
      (error: unknown) =>
        isNotFound(error) && error instanceof HttpError && error.serviceError === 'err_not_found',
    );
    assert.equal(server.requests.length, 1);
    assert.equal(await createFetchByHash(client)('0xmissing'), null);
  });

  it('raise InvalidRecordError for a malformed record, without retrying', async () => {
    const { client, server } = await setup(() => ({ body: { tx: record(5, { rawId: undefined }) } }));
    await assert.rejects(client.txsByHash('0xhash5'), InvalidRecordError);
    assert.equal(server.requests.length, 1);
  });
});

describe('the other endpoints', () => {
  it('call their documented paths and type the answers', async () => {
    const { client, server } = await setup((request) => {
      switch (request.path) {
        case '/info':
          return {
            body: { tokenList: [{ tag: 'ethereum-eth-0x0', symbol: 'ETH', decimals: 18 }], isSynced: true },
          };
        case '/balances/0xAbC':
          return {
            body: { accid: '0xAbC', balances: [{ tag: 'ethereum-eth-0x0', amount: '5', decimals: 18 }] },
          };
        case '/balance/ethereum-eth-0x0/0xAbC':
          return {
            body: { accid: '0xAbC', balance: { tag: 'ethereum-eth-0x0', amount: '5', decimals: 18 } },
          };
        case '/fees':
          return {
            body: {
              fees: [{ tokenTag: 't', transferFee: '1', bundleFee: '2', burnFeeMap: { ethereum: '3' } }],
            },
          };
        case '/fee/t':
          return { body: { fee: { tokenTag: 't', transferFee: '1', bundleFee: '2', burnFeeMap: {} } } };
        default:
          return notFound;
      }
    });
    assert.equal((await client.info()).tokenList[0]?.tag, 'ethereum-eth-0x0');
    assert.equal((await client.balances('0xAbC')).balances[0]?.amount, '5');
    assert.equal((await client.balance('ethereum-eth-0x0', '0xAbC')).balance.decimals, 18);
    assert.equal((await client.fees())[0]?.burnFeeMap['ethereum'], '3');
    assert.equal((await client.fee('t')).bundleFee, '2');
    assert.equal(server.requests.length, 5);
    assert.ok(
      server.requests.every(
        (r) => r.method === 'GET' && /^ledger-indexer/.test(r.headers['user-agent'] ?? ''),
      ),
    );
  });

  it('call the Tools endpoints with POST and a JSON body, or GET and a query when configured', async () => {
    const { client, server } = await setup(
      (request) => ({ body: { path: request.path, method: request.method } }),
      {
        toolMethods: { genLedgerId: 'GET' },
      },
    );
    assert.deepEqual(await client.tools.hashMessage({ message: 'hi' }), {
      path: '/hashMessage',
      method: 'POST',
    });
    assert.deepEqual(JSON.parse(server.requests[0]?.body ?? ''), { message: 'hi' });
    await client.tools.genLedgerId({ n: 2, kind: 'tx' });
    assert.equal(server.requests[1]?.url, '/genLedgerId?n=2&kind=tx');
    await client.tools.verifyMessage({ sig: '0x1' }, { method: 'GET' });
    assert.equal(server.requests[2]?.url, '/verifyMessage?sig=0x1');
    assert.equal(Object.keys(client.tools).length, 7);
  });

  it('pages by key where the deployment offers it', async () => {
    const { client, server } = await setup(() => ({
      body: { txs: [record(11), record(12)], hasNextPage: false },
    }));
    const page = await client.txsAfter({ cursor: 10, count: 2 });
    assert.deepEqual(
      page.txs.map((tx) => tx.rawId),
      [11, 12],
    );
    assert.equal(page.hasNextPage, false);
    assert.equal(server.requests[0]?.url, '/txs?cursor=10&order=asc&count=2');
  });

  it('keeps the path prefix of the base URL', async () => {
    const server = await startHttpServer(() => ({ body: { currentPage: 1, totalPages: 1, txs: [] } }));
    const client = createLedgerClient({ baseUrl: `${server.baseUrl}/api/v1/`, requestsPerSecond: 0 });
    open.push({ client, server });
    await client.txs({ page: 1 });
    assert.equal(server.requests[0]?.url, '/api/v1/txs?page=1');
  });

  it('sends the credentials of the base URL as Basic auth, and never shows them', async () => {
    const server = await startHttpServer(() => ({ status: 401, body: { error: 'err_unauthorized' } }));
    const baseUrl = server.baseUrl.replace('http://', 'http://reader:s%40cret@');
    const client = createLedgerClient({ baseUrl, requestsPerSecond: 0 });
    open.push({ client, server });
    const error = await client.info().then(
      () => assert.fail('expected a 401'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof HttpError && error.status === 401);
    assert.equal(
      server.requests[0]?.headers.authorization,
      `Basic ${Buffer.from('reader:s@cret').toString('base64')}`,
    );
    assert.doesNotMatch(`${error.message} ${error.url}`, /cret|reader/);
  });

  it('rejects bad arguments before sending anything', async () => {
    const { client, server } = await setup(() => ({ body: {} }));
    await assert.rejects(client.txs({ page: 0 }), TypeError);
    await assert.rejects(client.balances(''), TypeError);
    await assert.rejects(client.txsAfter({ cursor: -1 }), TypeError);
    assert.equal(server.requests.length, 0);
  });
});
