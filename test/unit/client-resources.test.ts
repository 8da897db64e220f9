import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseAccountBalance,
  parseBalances,
  parseFees,
  parseInfo,
  parseOneFee,
  parseSubmitResult,
  parseToolAnswer,
} from '../../src/client/resources.js';
import { MalformedResponseError } from '../../src/errors.js';

const URL = 'http://ledger.test/x';
const json = (value: unknown) => JSON.stringify(value);

describe('info, balances and fees answers', () => {
  it('types the token list and keeps the whole info answer', () => {
    const body = {
      feeRecipient: '0xfee',
      isSynced: true,
      lockers: { ethereum: '0xlock' },
      tokenList: [
        {
          tag: 'ethereum-usdc-0xa0b8',
          symbol: 'USDC',
          decimals: 6,
          chainType: 'ethereum',
          chainID: '1',
          id: '0xa0b8',
          totalSupply: '9',
        },
        {
          tag: 'arweave,ethereum-ar-AR,0x4fad',
          symbol: 'AR',
          decimals: 12,
          chainType: 'arweave,ethereum',
          chainID: '0,1',
          id: 'AR,0x4fad',
        },
      ],
    };
    const info = parseInfo(json(body), URL);
    assert.equal(info.tokenList.length, 2);
    assert.equal(info.tokenList[1]?.tag, 'arweave,ethereum-ar-AR,0x4fad');
    assert.equal(info.tokenList[0]?.decimals, 6);
    assert.equal(info.tokenList[0]?.raw['totalSupply'], '9');
    assert.deepEqual(info.raw['lockers'], { ethereum: '0xlock' });
  });

  it('keeps balances as decimal strings', () => {
    const big = '115792089237316195423570985008687907853269984665640564039457584007913129639936';
    const balances = parseBalances(
      json({ accid: 'eid-1', balances: [{ tag: 't', amount: big, decimals: 18 }] }),
      URL,
    );
    assert.deepEqual(balances, { accid: 'eid-1', balances: [{ tag: 't', amount: big, decimals: 18 }] });
    const one = parseAccountBalance(
      json({ accid: 'eid-1', balance: { tag: 't', amount: '0', decimals: 18 } }),
      URL,
    );
    assert.equal(one.balance.amount, '0');
  });

  it('reads fees and a token fee with its burn fee map', () => {
    const fee = {
      tokenTag: 't',
      transferFee: '0',
      bundleFee: '0',
      burnFeeMap: { ethereum: '4400000', arweave: '1' },
    };
    assert.deepEqual(parseFees(json({ fees: [fee] }), URL), [fee]);
    assert.deepEqual(parseOneFee(json({ fee }), URL), fee);
  });

  it('reads the answer of a submitted transaction', () => {
    assert.equal(parseSubmitResult(json({ status: 'ok' }), URL).status, 'ok');
  });

  it('passes a Tools answer through as JSON, or as text when it is not JSON', () => {
    assert.deepEqual(parseToolAnswer('{"hash":"0x1"}'), { hash: '0x1' });
    assert.equal(parseToolAnswer('0xabc'), '0xabc');
  });

  it('are malformed when a promised field is missing or mistyped', () => {
    const cases: Array<() => unknown> = [
      () => parseInfo('not json', URL),
      () => parseInfo(json({ tokenList: null }), URL),
      () => parseInfo(json({ tokenList: [{ symbol: 'X', decimals: 1 }] }), URL),
      () => parseInfo(json({ tokenList: [{ tag: 't', decimals: -1 }] }), URL),
      () => parseBalances(json({ accid: 'a', balances: [{ tag: 't', amount: 1.5, decimals: 1 }] }), URL),
      () => parseAccountBalance(json({ accid: 'a' }), URL),
      () => parseFees(json({ fees: [{ tokenTag: 't', transferFee: '-1', bundleFee: '0' }] }), URL),
      () =>
        parseOneFee(
          json({ fee: { tokenTag: 't', transferFee: '0', bundleFee: '0', burnFeeMap: { e: 1 } } }),
          URL,
        ),
      () => parseSubmitResult(json({ ok: true }), URL),
    ];
    for (const parse of cases) assert.throws(parse, MalformedResponseError);
  });
});
