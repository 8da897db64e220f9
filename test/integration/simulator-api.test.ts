import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { personalMessageHash, signedMessage } from '../../src/simulator/evm.js';
import { createSimulator } from '../../src/simulator/simulator.js';
import type { GroundTruthRecord, Simulator } from '../../src/simulator/types.js';

type Json = Record<string, unknown>;

const RECORD_FIELDS: Record<string, string> = {
  rawId: 'number',
  id: 'string',
  tokenSymbol: 'string',
  action: 'string',
  from: 'string',
  to: 'string',
  amount: 'string',
  fee: 'string',
  feeRecipient: 'string',
  nonce: 'number',
  tokenID: 'string',
  chainType: 'string',
  chainID: 'string',
  data: 'string',
  version: 'string',
  sig: 'string',
  ledgerHash: 'string',
  status: 'string',
  internalStatus: 'string',
  timestamp: 'number',
  targetChainTxHash: 'string',
  express: 'object',
};
const OPTIONAL_ON_OLD = new Set(['version', 'express', 'targetChainTxHash']);

function assertRecordShape(record: Json): void {
  for (const key of Object.keys(record)) assert.ok(key in RECORD_FIELDS, `unexpected field ${key}`);
  for (const [key, type] of Object.entries(RECORD_FIELDS)) {
    if (!(key in record) && OPTIONAL_ON_OLD.has(key)) continue;
    assert.equal(typeof record[key], type, `${key} of ${JSON.stringify(record).slice(0, 200)}`);
  }
  assert.ok(Number.isSafeInteger(record.rawId) && Number.isSafeInteger(record.nonce));
  assert.match(record.amount as string, /^\d+$/);
  assert.match(record.fee as string, /^\d+$/);
  assert.match(record.sig as string, /^0x[0-9a-f]+$/);
  assert.match(record.ledgerHash as string, /^0x[0-9a-f]{64}$/);
  if (record.express !== undefined) {
    const express = record.express as Json;
    assert.deepEqual(Object.keys(express).sort(), ['chainTxHash', 'err', 'refundLedgerHash', 'withdrawFee']);
    for (const value of Object.values(express)) assert.equal(typeof value, 'string');
  }
  if (record.status === 'confirmed') assert.ok(record.id === '' && record.timestamp === 0);
}

describe('simulator query endpoints', () => {
  let sim: Simulator;
  let url: string;
  let truth: GroundTruthRecord[];
  const get = async (path: string): Promise<{ status: number; body: Json }> => {
    const res = await fetch(url + path);
    return { status: res.status, body: (await res.json()) as Json };
  };
  const txs = (body: Json) => body.txs as Json[];

  before(async () => {
    sim = createSimulator({ records: 2345, seed: 42, holeRate: 0.02 });
    ({ url } = await sim.listen());
    truth = [...sim.records()];
  });
  after(() => sim.close());

  it('serves /info with the token list and its tags', async () => {
    const { status, body } = await get('/info');
    assert.equal(status, 200);
    const tokens = body.tokenList as Json[];
    assert.ok(tokens.length >= 5);
    for (const token of tokens) {
      for (const key of ['tag', 'symbol', 'chainType', 'chainID', 'id', 'totalSupply'])
        assert.equal(typeof token[key], 'string');
      assert.equal(typeof token.decimals, 'number');
      const ids = (token.id as string).split(',').map((p) => (p.startsWith('0x') ? p.toLowerCase() : p));
      const expected = `${(token.chainType as string).toLowerCase()}-${(token.symbol as string).toLowerCase()}-${ids.join(',')}`;
      assert.equal(token.tag, expected);
    }
    assert.deepEqual(new Set(tokens.map((t) => t.decimals)), new Set([6, 12, 18]));
    assert.equal(typeof body.feeRecipient, 'string');
    assert.equal(typeof body.lockers, 'object');
    assert.equal(body.isSynced, true);
  });

  it('serves fees and balances consistent with the records', async () => {
    const fees = await get('/fees');
    const list = fees.body.fees as Json[];
    assert.ok(list.length >= 5);
    const one = await get(`/fee/${encodeURIComponent(list[0]!.tokenTag as string)}`);
    assert.deepEqual(one.body, { fee: list[0] });
    assert.equal((await get('/fee/nope-nope-0')).status, 404);

    // Net movements per account and token, computed from the ground truth.
    const info = await get('/info');
    const feeRecipient = (info.body.feeRecipient as string).toLowerCase();
    const net = new Map<string, bigint>();
    const add = (account: string, tag: string, delta: bigint) => {
      const key = `${account.toLowerCase()}|${tag}`;
      net.set(key, (net.get(key) ?? 0n) + delta);
    };
    for (const r of truth) {
      const amount = BigInt(r.amount);
      const fee = BigInt(r.fee);
      if (r.action === 'mint') add(r.to, r.tokenTag, amount);
      if (r.action === 'set' || r.action === 'mint') continue;
      add(r.from, r.tokenTag, -fee);
      add(feeRecipient, r.tokenTag, fee);
      if (r.action === 'transfer') {
        add(r.from, r.tokenTag, -amount);
        add(r.to, r.tokenTag, amount);
      } else if (r.action === 'burn') {
        add(r.from, r.tokenTag, -amount);
      } else if (
        r.action === 'bundle' &&
        (r.internalStatus === 'success' || JSON.parse(r.internalStatus).status === 'success')
      ) {
        for (const item of JSON.parse(r.data).bundle.items as Array<Record<string, string>>) {
          add(item.from!, item.tag!, -BigInt(item.amount!));
          add(item.to!, item.tag!, BigInt(item.amount!));
        }
      }
    }
    assert.ok(
      [...net.values()].every((v) => v >= 0n),
      'no balance goes negative',
    );
    const accounts = [...new Set(truth.slice(-40).map((r) => r.from))];
    for (const account of accounts) {
      const { status, body } = await get(`/balances/${account}`);
      assert.equal(status, 200);
      assert.equal(body.accid, account);
      for (const balance of body.balances as Json[]) {
        assert.equal(
          balance.amount,
          String(net.get(`${account.toLowerCase()}|${balance.tag}`) ?? 0n),
          `${account}`,
        );
        const single = await get(`/balance/${encodeURIComponent(balance.tag as string)}/${account}`);
        assert.deepEqual(single.body, { accid: account, balance });
      }
    }
  });

  it('serves every record with the exact wire shape, newest first, 10 a page', async () => {
    const first = await get('/txs');
    const explicit = await get('/txs?page=1');
    assert.deepEqual(first.body, explicit.body);
    assert.deepEqual(Object.keys(first.body), ['currentPage', 'totalPages', 'txs']);
    assert.equal(first.body.currentPage, 1);
    assert.equal(first.body.totalPages, Math.ceil(truth.length / 10));
    const seen: number[] = [];
    for (let page = 1; page <= (first.body.totalPages as number); page++) {
      const { body } = await get(`/txs?page=${page}`);
      assert.equal(body.currentPage, page);
      for (const record of txs(body)) assertRecordShape(record);
      seen.push(...txs(body).map((r) => r.rawId as number));
    }
    assert.deepEqual(seen, truth.map((r) => r.rawId).reverse());
    assert.equal(truth.length % 10, 5);
    const past = await get(`/txs?page=${(first.body.totalPages as number) + 1}`);
    assert.deepEqual(past.body.txs, []);
    assert.equal(past.body.totalPages, first.body.totalPages);
    assert.equal((await get('/txs?page=0')).status, 400);
    assert.equal((await get('/txs?page=x')).status, 400);
  });

  it('filters by token tag, action and withoutAction exactly', async () => {
    const tag = truth[100]!.tokenTag;
    const cases: Array<[string, (r: GroundTruthRecord) => boolean]> = [
      [`tokenTag=${encodeURIComponent(tag)}`, (r) => r.tokenTag === tag],
      ['action=burn', (r) => r.action === 'burn'],
      ['withoutAction=transfer', (r) => r.action !== 'transfer'],
      [`action=mint&tokenTag=${encodeURIComponent(tag)}`, (r) => r.action === 'mint' && r.tokenTag === tag],
      ['action=unknown', () => false],
      ['tokenTag=nope', () => false],
    ];
    for (const [query, keep] of cases) {
      const expected = truth
        .filter(keep)
        .map((r) => r.rawId)
        .reverse();
      const { body } = await get(`/txs?${query}`);
      assert.equal(body.totalPages, Math.ceil(expected.length / 10), query);
      const got: number[] = [];
      for (let page = 1; page <= (body.totalPages as number); page++) {
        got.push(...txs((await get(`/txs?${query}&page=${page}`)).body).map((r) => r.rawId as number));
      }
      assert.deepEqual(got, expected, query);
    }
  });

  it('serves one account under both path shapes, EVM addresses in any case', async () => {
    const counts = new Map<string, number>();
    for (const r of truth) {
      counts.set(r.from, (counts.get(r.from) ?? 0) + 1);
      if (r.to !== r.from) counts.set(r.to, (counts.get(r.to) ?? 0) + 1);
    }
    const evm = [...counts.entries()].filter(([a]) => a.startsWith('0x')).sort((a, b) => b[1] - a[1])[0]![0];
    const arweave = [...counts.entries()].filter(([a]) => !a.startsWith('0x') && !a.startsWith('eid'))[0]![0];
    for (const account of [evm, arweave]) {
      const expected = truth
        .filter(
          (r) =>
            r.from.toLowerCase() === account.toLowerCase() || r.to.toLowerCase() === account.toLowerCase(),
        )
        .map((r) => r.rawId)
        .reverse();
      const a = await get(`/txsByAccount/${account}?page=1`);
      const b = await get(`/txs/${account}`);
      assert.deepEqual(a.body, b.body);
      assert.deepEqual(Object.keys(a.body), ['accid', 'currentPage', 'totalPages', 'txs']);
      assert.equal(a.body.accid, account);
      assert.equal(a.body.totalPages, Math.ceil(expected.length / 10));
      const got: number[] = [];
      for (let page = 1; page <= (a.body.totalPages as number); page++) {
        got.push(...txs((await get(`/txs/${account}?page=${page}`)).body).map((r) => r.rawId as number));
      }
      assert.deepEqual(got, expected);
    }
    const lower = await get(`/txsByAccount/${evm.toLowerCase()}`);
    assert.equal(lower.body.accid, evm.toLowerCase());
    assert.deepEqual(lower.body.txs, (await get(`/txsByAccount/${evm}`)).body.txs);
    const withAction = await get(`/txsByAccount/${evm}?withoutAction=transfer`);
    assert.ok(txs(withAction.body).every((r) => r.action !== 'transfer'));
    const nobody = await get('/txsByAccount/0x000000000000000000000000000000000000dEaD');
    assert.deepEqual(nobody.body, {
      accid: '0x000000000000000000000000000000000000dEaD',
      currentPage: 1,
      totalPages: 0,
      txs: [],
    });
  });

  it('finds records by ledger hash and minted records by chain hash', async () => {
    for (const r of [truth[0]!, truth[1000]!, truth.at(-1)!]) {
      const { status, body } = await get(`/txsByHash/${r.ledgerHash}`);
      assert.equal(status, 200);
      assert.equal((body.tx as Json).rawId, r.rawId);
      assertRecordShape(body.tx as Json);
    }
    const mint = truth.findLast((r) => r.action === 'mint')!;
    const minted = await get(`/mintedTxByChainTxHash/${mint.targetChainTxHash}`);
    assert.equal((minted.body.tx as Json).ledgerHash, mint.ledgerHash);
    const unknown = `0x${'ab'.repeat(32)}`;
    assert.deepEqual(await get(`/txsByHash/${unknown}`), { status: 404, body: { error: 'err_not_found' } });
    assert.deepEqual(await get(`/mintedTxByChainTxHash/${unknown}`), {
      status: 404,
      body: { error: 'err_not_found' },
    });
    const transfer = truth.find((r) => r.action === 'transfer')!;
    assert.equal((await get(`/mintedTxByChainTxHash/${transfer.ledgerHash}`)).status, 404);
    assert.equal((await get('/no/such/path')).status, 404);
  });

  it('accepts a valid transfer and appends it as a confirmed record', async () => {
    const info = (await get('/info')).body;
    const token = (info.tokenList as Json[]).find((t) => t.symbol === 'USDC')!;
    const rich = truth.find(
      (r) => r.tokenTag === token.tag && r.action === 'mint' && r.to.startsWith('0x'),
    )!.to;
    const balance = BigInt(
      ((await get(`/balance/${token.tag}/${rich}`)).body.balance as Json).amount as string,
    );
    assert.ok(balance > 20_000n);
    const tx = {
      tokenSymbol: 'usdc',
      action: 'transfer',
      from: rich,
      to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      amount: '1000',
      fee: token.transferFee as string,
      feeRecipient: info.feeRecipient as string,
      nonce: Date.now(),
      tokenID: token.id as string,
      chainType: token.chainType as string,
      chainID: token.chainID as string,
      data: '',
      version: 'v1',
      sig: `0x${'1b'.repeat(65)}`,
    };
    const post = (body: unknown) =>
      fetch(`${url}/tx`, {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: await res.json() }));
    assert.deepEqual(await post(tx), { status: 200, body: { status: 'ok' } });
    const head = txs((await get('/txs')).body)[0]!;
    assert.equal(head.ledgerHash, personalMessageHash(signedMessage(tx)));
    assert.equal(head.status, 'confirmed');
    assert.equal(head.tokenSymbol, 'usdc');
    assert.equal(head.amount, '1000');
    assert.equal(head.nonce, tx.nonce);
    assertRecordShape(head);
    const byHash = await get(`/txsByHash/${head.ledgerHash}`);
    assert.equal((byHash.body.tx as Json).rawId, head.rawId);
    const after = BigInt(
      ((await get(`/balance/${token.tag}/${rich}`)).body.balance as Json).amount as string,
    );
    assert.equal(after, balance - 1000n - BigInt(tx.fee));

    const refusals: Array<[unknown, string]> = [
      ['{not json', 'err_invalid_json'],
      [{ ...tx, nonce: tx.nonce + 1, amount: '1.5' }, 'err_invalid_amount'],
      [{ ...tx, nonce: tx.nonce + 1, amount: '-1' }, 'err_invalid_amount'],
      [{ ...tx, nonce: tx.nonce + 1, action: 'mint' }, 'err_invalid_action'],
      [{ ...tx, nonce: tx.nonce + 1, tokenSymbol: 'DOGE' }, 'err_token_not_found'],
      [{ ...tx, nonce: tx.nonce + 1, fee: '1' }, 'err_invalid_fee'],
      [{ ...tx, nonce: tx.nonce + 1, to: 'not an account' }, 'err_invalid_account'],
      [{ ...tx, nonce: tx.nonce + 1, sig: 'nope' }, 'err_invalid_signature'],
      [{ ...tx, nonce: 'soon' }, 'err_invalid_nonce'],
      [tx, 'err_nonce_too_low'],
      [{ ...tx, nonce: tx.nonce + 1, amount: (balance * 10n).toString() }, 'err_insufficient_balance'],
      [{ ...tx, nonce: tx.nonce + 1, data: '{oops' }, 'err_invalid_data'],
    ];
    for (const [body, error] of refusals) {
      const res = await post(body);
      assert.equal(res.status, 400, error);
      assert.deepEqual(res.body, { error });
    }
    assert.equal(txs((await get('/txs')).body)[0]!.rawId, head.rawId, 'refused transfers are not recorded');
  });
});
