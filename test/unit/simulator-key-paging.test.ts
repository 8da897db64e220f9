import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type KeyLimits,
  type KeyQuery,
  listDialect,
  type PagingMode,
  parseKeyQuery,
} from '../../src/service-query/key-query.js';
import { tokenIndexesOf } from '../../src/service-query/token-tags.js';
import { SimulatedLedger } from '../../src/simulator/ledger.js';
import { json, matchPublicRoute, type PublicRouteContext } from '../../src/simulator/public-routes.js';

const NO_LIMITS: KeyLimits = { maxCount: 0, refuseCountAbove: 0 };
type Tx = { rawId: number; from: string; to: string; action: string; ledgerHash: string };
type Body = { txs: Tx[]; hasNextPage?: boolean; totalPages?: number; currentPage?: number };

const ledger = new SimulatedLedger({
  seed: 21,
  records: 2500,
  holeRate: 0.05,
  packageDelayMs: 1000,
  burnTargetDelayMs: 5000,
  jsonCacheSize: 10_000,
  historyEndMs: Date.UTC(2026, 0, 1),
});
const tags = ledger.tokens.map((t) => t.tag);

/** The public routes of the shared ledger under a paging mode, answered in-process. */
function server(paging: PagingMode, limits: KeyLimits = NO_LIMITS) {
  const ctx: PublicRouteContext = {
    ledger,
    paging,
    keyLimits: limits,
    recordFaults: () => ({ malformedRate: 0, tamperedRate: 0 }),
    submit: () => json(500, { error: 'err_internal' }),
  };
  return (url: string): { status: number; body: Body & Record<string, unknown>; dialect?: string } => {
    const { pathname, searchParams } = new URL(url, 'http://sim');
    const route = matchPublicRoute(ctx, 'GET', pathname, searchParams);
    assert.ok(route, url);
    const reply = route.answer(undefined);
    return { status: reply.status, body: JSON.parse(String(reply.body)), dialect: route.dialect };
  };
}
type Get = ReturnType<typeof server>;

const sep = (path: string) => (path.includes('?') ? '&' : '?');

/** A whole list walked by page number, newest first. */
function pageWalk(get: Get, path: string): number[] {
  const rawIds: number[] = [];
  for (let page = 1; ; page++) {
    const body = get(`${path}${sep(path)}page=${page}`).body;
    rawIds.push(...body.txs.map((t) => t.rawId));
    if (page >= body.totalPages!) return rawIds;
  }
}

/** A whole list walked by key, following the last rawId as the deployed clients do. */
function keyWalk(get: Get, path: string, order: string, count: number): number[] {
  const rawIds: number[] = [];
  let cursor = 0;
  for (let n = 0; n < 10_000; n++) {
    const at = cursor > 0 ? `&cursor=${cursor}` : '';
    const body = get(`${path}${sep(path)}order=${order}&count=${count}${at}`).body;
    assert.equal(body.totalPages, undefined);
    rawIds.push(...body.txs.map((t) => t.rawId));
    if (!body.hasNextPage) return rawIds;
    cursor = body.txs.at(-1)!.rawId;
  }
  throw new Error('key walk did not end');
}

const all = pageWalk(server('page'), '/txs').reverse();
const evm = (() => {
  const get = server('page');
  const first = get('/txs').body.txs;
  const record = [...first, ...get('/txs?page=2').body.txs].find((t) => /^0x[0-9a-fA-F]{40}$/.test(t.from));
  assert.ok(record, 'an EVM sender on the first pages');
  return record.from;
})();
const other = (() => {
  const record = server('page')('/txs?page=7').body.txs.find((t) => !t.to.startsWith('0x'));
  assert.ok(record, 'a non-EVM recipient');
  return record.to;
})();

describe('key query parameters', () => {
  it('reads cursor, order and count with the deployed defaults', () => {
    const q = (text: string, limits = NO_LIMITS) => parseKeyQuery(new URLSearchParams(text), limits);
    assert.deepEqual(q(''), { cursor: undefined, order: 'desc', count: 10 });
    assert.deepEqual(q('cursor=0&count=0&order='), { cursor: undefined, order: 'desc', count: 10 });
    assert.deepEqual(q('cursor=42&order=ASC&count=100'), { cursor: 42, order: 'asc', count: 100 });
    assert.deepEqual(q('order=Desc'), { cursor: undefined, order: 'desc', count: 10 });
    assert.deepEqual(q('order=asc'), { cursor: undefined, order: 'asc', count: 10 });
    for (const bad of ['cursor=-1', 'cursor=1.5', 'cursor=x', 'cursor=1e3', 'cursor=9999999999999999'])
      assert.deepEqual(q(bad), { error: 'err_invalid_cursor' }, bad);
    for (const bad of ['order=up', 'order=ascending', 'order=1'])
      assert.deepEqual(q(bad), { error: 'err_invalid_order' }, bad);
    for (const bad of ['count=-1', 'count=2.5', 'count=ten'])
      assert.deepEqual(q(bad), { error: 'err_invalid_count' }, bad);
    const limited = (text: string, limits: KeyLimits) =>
      (parseKeyQuery(new URLSearchParams(text), limits) as KeyQuery).count;
    assert.equal(limited('count=50', { maxCount: 0, refuseCountAbove: 50 }), 50);
    assert.deepEqual(q('count=51', { maxCount: 0, refuseCountAbove: 50 }), { error: 'err_invalid_count' });
    assert.equal(limited('count=500', { maxCount: 30, refuseCountAbove: 0 }), 30);
    assert.equal(limited('', { maxCount: 3, refuseCountAbove: 0 }), 3);
  });

  it('picks the dialect by paging mode and parameters', () => {
    const d = (mode: PagingMode, text: string) => listDialect(mode, new URLSearchParams(text));
    assert.equal(d('both', ''), 'page');
    assert.equal(d('both', 'page=3&tokenTag=x&address=y'), 'page');
    for (const key of ['cursor=5', 'order=asc', 'count=100', 'cursor=']) assert.equal(d('both', key), 'key');
    assert.equal(d('key', 'page=3'), 'key');
    assert.equal(d('key', ''), 'key');
    assert.equal(d('page', 'cursor=5&order=asc&count=100'), 'page');
  });

  it('reads a list of tags, commas inside tags included', () => {
    const withComma = tags.findIndex((t) => t.includes(','));
    assert.ok(withComma >= 0, 'a tag holding a comma');
    assert.deepEqual(tokenIndexesOf(tags[withComma]!, tags), [withComma]);
    assert.deepEqual(tokenIndexesOf(`${tags[2]},${tags[withComma]}`, tags), [withComma, 2].sort());
    assert.deepEqual(tokenIndexesOf(`${tags[withComma]},${tags[1]},${tags[1]}`, tags), [withComma, 1].sort());
    assert.deepEqual(tokenIndexesOf(`nope,${tags[3]}`, tags), [3]);
    assert.deepEqual(tokenIndexesOf('nope', tags), []);
  });
});

describe('simulator lists in both dialects', () => {
  const get = server('both');
  const lists = [
    '/txs',
    `/txs/${evm}`,
    `/txsByAccount/${evm.toLowerCase()}`,
    `/txs/${other}`,
    `/txs?tokenTag=${encodeURIComponent(tags[1]!)}`,
    `/txs?tokenTag=${encodeURIComponent(tags[0]!)}`,
    '/txs?action=mint',
    '/txs?withoutAction=transfer',
    `/txs/${evm}?action=transfer&tokenTag=${encodeURIComponent(tags[1]!)}`,
    `/txsByAccount/${other}?withoutAction=mint`,
  ];

  it('a key walk from the start returns exactly the page walk, on every list and filter', () => {
    for (const path of lists) {
      const pages = pageWalk(get, path);
      assert.ok(pages.length > 0, path);
      assert.deepEqual(keyWalk(get, path, 'asc', 100), [...pages].reverse(), `${path} asc`);
      assert.deepEqual(keyWalk(get, path, 'desc', 7), pages, `${path} desc`);
    }
    assert.equal(keyWalk(get, '/txs', 'ASC', 100).length, all.length);
  });

  it('serves an account by address=, EVM addresses in any case, others exactly', () => {
    const byPath = pageWalk(get, `/txs/${evm}`);
    assert.deepEqual(keyWalk(get, `/txs?address=${evm}`, 'desc', 100), byPath);
    assert.deepEqual(keyWalk(get, `/txs?address=${evm.toLowerCase()}`, 'asc', 100), [...byPath].reverse());
    assert.deepEqual(
      keyWalk(get, `/txs?address=${other}&action=mint`, 'asc', 100),
      [...pageWalk(get, `/txs/${other}?action=mint`)].reverse(),
    );
    const changed = other.toUpperCase() === other ? other.toLowerCase() : other.toUpperCase();
    assert.deepEqual(get(`/txs?address=${changed}&count=5`).body, { txs: [], hasNextPage: false });
    assert.deepEqual(get('/txs/unknown-account?count=5').body, { txs: [], hasNextPage: false });
  });

  it('takes two tags comma-separated: the union of both lists', () => {
    const two = `${tags[0]},${tags[3]}`;
    const union = [...pageWalk(get, `/txs?tokenTag=${encodeURIComponent(tags[0]!)}`)]
      .concat(pageWalk(get, `/txs?tokenTag=${encodeURIComponent(tags[3]!)}`))
      .sort((a, b) => a - b);
    assert.deepEqual(keyWalk(get, `/txs?tokenTag=${encodeURIComponent(two)}`, 'asc', 100), union);
    const account = `/txs?address=${evm}&tokenTag=${encodeURIComponent(`${tags[1]},${tags[2]}`)}`;
    const expected = pageWalk(get, `/txs/${evm}`).filter(
      (id) =>
        pageWalk(get, `/txs/${evm}?tokenTag=${tags[1]}`).includes(id) ||
        pageWalk(get, `/txs/${evm}?tokenTag=${tags[2]}`).includes(id),
    );
    assert.deepEqual(keyWalk(get, account, 'desc', 100), expected);
    assert.deepEqual(get(`/txs?tokenTag=nope&count=3`).body, { txs: [], hasNextPage: false });
  });

  it('starts desc at the head, asc at the start; the cursor is exclusive', () => {
    const head = get('/txs?order=desc').body;
    assert.deepEqual(
      head.txs.map((t) => t.rawId),
      all.slice(-10).reverse(),
      'default count 10, newest first',
    );
    assert.equal(head.hasNextPage, true);
    assert.deepEqual(Object.keys(head), ['txs', 'hasNextPage']);
    assert.deepEqual(
      get('/txs?cursor=0&order=desc&count=3').body.txs.map((t) => t.rawId),
      all.slice(-3).reverse(),
    );
    assert.deepEqual(
      get('/txs?count=4&order=aSc').body.txs.map((t) => t.rawId),
      all.slice(0, 4),
    );
    assert.deepEqual(
      get(`/txs?cursor=${all[100]}&order=asc&count=3`).body.txs.map((t) => t.rawId),
      all.slice(101, 104),
    );
    assert.deepEqual(
      get(`/txs?cursor=${all[100]}&count=3`).body.txs.map((t) => t.rawId),
      all.slice(97, 100).reverse(),
      'desc by default, below the cursor',
    );
    const tail = get(`/txs?cursor=${all.at(-3)}&order=asc&count=5`).body;
    assert.deepEqual(tail, { ...tail, hasNextPage: false });
    assert.equal(tail.txs.length, 2);
    assert.equal(get(`/txs?cursor=${all[0]}&order=desc`).body.hasNextPage, false);
    assert.equal(get(`/txs?cursor=${all.at(-1)! + 1000}&order=asc`).body.txs.length, 0);
  });

  it('answers a bad key parameter 400 with its error code', () => {
    assert.deepEqual(get('/txs?cursor=abc').body, { error: 'err_invalid_cursor' });
    assert.equal(get('/txs?cursor=abc').status, 400);
    assert.deepEqual(get(`/txs/${evm}?order=sideways`).body, { error: 'err_invalid_order' });
    assert.deepEqual(get('/txsByAccount/x?count=-3').body, { error: 'err_invalid_count' });
  });

  it('leaves the page dialect as it was when no key parameter is sent', () => {
    const page = get('/txs?page=2').body;
    assert.deepEqual(Object.keys(page), ['currentPage', 'totalPages', 'txs']);
    assert.deepEqual(
      page.txs.map((t) => t.rawId),
      all.slice(-20, -10).reverse(),
    );
    assert.deepEqual(Object.keys(get(`/txs/${evm}`).body), ['accid', 'currentPage', 'totalPages', 'txs']);
  });
});

describe('simulator paging modes', () => {
  it('key: every list request is answered by key; page is ignored, so a page walk cannot loop', () => {
    const get = server('key');
    const third = get('/txs?page=3');
    assert.equal(third.dialect, 'key');
    assert.deepEqual(Object.keys(third.body), ['txs', 'hasNextPage']);
    assert.deepEqual(
      third.body.txs.map((t) => t.rawId),
      all.slice(-10).reverse(),
      'the newest records, desc, 10',
    );
    assert.deepEqual(get(`/txs/${evm}?page=9`).body, get(`/txs/${evm}`).body);
    assert.equal(get('/txs?page=x').status, 200, 'page is not even read');
    assert.deepEqual(
      keyWalk(get, `/txsByAccount/${evm}`, 'asc', 100),
      pageWalk(server('page'), `/txs/${evm}`).reverse(),
    );
  });

  it('page: cursor, order and count are ignored', () => {
    const get = server('page');
    const keyed = get(`/txs?cursor=${all[5]}&order=asc&count=100`);
    assert.equal(keyed.dialect, 'page');
    assert.deepEqual(keyed.body, get('/txs').body);
    assert.deepEqual(get(`/txs/${evm}?page=2&count=3&order=asc`).body, get(`/txs/${evm}?page=2`).body);
    assert.equal(get('/txs?cursor=bad').status, 200);
    assert.equal(get('/txs?page=0').status, 400);
  });

  it('max count: a silent cap, with hasNextPage while more exist', () => {
    const get = server('both', { maxCount: 25, refuseCountAbove: 0 });
    const first = get('/txs?order=asc&count=100').body;
    assert.equal(first.txs.length, 25);
    assert.equal(first.hasNextPage, true);
    assert.deepEqual(keyWalk(get, '/txs', 'asc', 100), all, 'a client going on from the last rawId gets all');
    const small = get(`/txs?cursor=${all.at(-26)}&order=asc&count=100`).body;
    assert.equal(small.txs.length, 25);
    assert.equal(small.hasNextPage, false);
  });

  it('refuse count above: a key request asking more is answered 400 err_invalid_count', () => {
    const get = server('both', { maxCount: 0, refuseCountAbove: 100 });
    assert.equal(get('/txs?order=asc&count=100').body.txs.length, 100);
    const refused = get(`/txs/${evm}?order=asc&count=101`);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { error: 'err_invalid_count' });
    assert.equal(get('/txs?page=2').status, 200, 'the page dialect has no count');
  });
});

describe('simulator single look-ups on the deployed spellings', () => {
  it('/tx/{ledgerHash} and /minted/{chainTxHash} answer as /txsByHash and /mintedTxByChainTxHash', () => {
    for (const mode of ['page', 'key', 'both'] as const) {
      const get = server(mode);
      const tx = get('/txs?page=4').body.txs[3];
      assert.ok(tx);
      const byHash = get(`/txsByHash/${tx.ledgerHash}`);
      assert.equal(byHash.status, 200);
      assert.deepEqual(get(`/tx/${tx.ledgerHash}`), byHash, mode);
      assert.deepEqual(get(`/tx/${tx.ledgerHash.toUpperCase().replace('0X', '0x')}`).body, byHash.body);
      const mint = keyWalk(server('both'), '/txs?action=mint', 'desc', 100)[0]!;
      const minted = ledger.render(ledger.positionOf(mint)!);
      const expected = get(`/mintedTxByChainTxHash/${minted.targetChainTxHash}`);
      assert.equal(expected.status, 200);
      assert.deepEqual(get(`/minted/${minted.targetChainTxHash}`), expected, mode);
      for (const unknown of [`/tx/0x${'0'.repeat(64)}`, '/minted/0xabc', `/minted/${tx.ledgerHash}`]) {
        const reply = get(unknown);
        assert.equal(reply.status, 404, unknown);
        assert.deepEqual(reply.body, { error: 'err_not_found' });
      }
    }
  });
});
