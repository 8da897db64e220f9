import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSingleTx, parseTxKeyPage, parseTxPage } from '../../src/client/page.js';
import { InvalidRecordError, MalformedResponseError } from '../../src/errors.js';

const URL = 'http://ledger.test/txs?page=2';

function record(rawId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    rawId,
    id: '',
    tokenSymbol: 'AR',
    action: 'transfer',
    from: 'a',
    to: 'b',
    amount: '1',
    fee: '0',
    feeRecipient: 'f',
    nonce: 1,
    tokenID: 'AR,0x4fadc7a98f2dc96510e42dd1a74141eeae0c1543',
    chainType: 'arweave,ethereum',
    chainID: '0,1',
    data: '',
    sig: '0x',
    ledgerHash: `0x${rawId.toString(16)}`,
    status: 'confirmed',
    timestamp: 0,
    ...overrides,
  };
}

function page(body: unknown): string {
  return typeof body === 'string' ? body : JSON.stringify(body);
}

describe('a transaction list page', () => {
  it('returns the valid records in order, newest first', () => {
    const result = parseTxPage(
      page({ accid: 'acc', currentPage: 2, totalPages: 7, txs: [record(30), record(29)] }),
      URL,
    );
    assert.equal(result.accid, 'acc');
    assert.equal(result.currentPage, 2);
    assert.equal(result.totalPages, 7);
    assert.deepEqual(
      result.txs.map((tx) => tx.rawId),
      [30, 29],
    );
    assert.deepEqual(result.rejected, []);
  });

  it('keeps the good records and rejects only the malformed one, with its reason and raw JSON', () => {
    const bad = record(29, { amount: '1e3' });
    const result = parseTxPage(
      page({ currentPage: 1, totalPages: 1, txs: [record(30), bad, record(28)] }),
      URL,
    );
    assert.deepEqual(
      result.txs.map((tx) => tx.rawId),
      [30, 28],
    );
    assert.equal(result.rejected.length, 1);
    assert.equal(result.rejected[0]?.rawId, 29);
    assert.match(result.rejected[0]?.reason ?? '', /amount/);
    assert.deepEqual(JSON.parse(result.rejected[0]?.raw ?? ''), bad);
  });

  it('treats txs of null, missing or empty as an empty page', () => {
    for (const body of [
      { currentPage: 9, totalPages: 8, txs: null },
      { currentPage: 9, totalPages: 8 },
      { currentPage: 9, totalPages: 8, txs: [] },
    ]) {
      const result = parseTxPage(page(body), URL);
      assert.deepEqual(result.txs, []);
      assert.deepEqual(result.rejected, []);
      assert.equal(result.totalPages, 8);
    }
  });

  it('has no accid for the global list', () => {
    assert.equal(parseTxPage(page({ currentPage: 1, totalPages: 0, txs: [] }), URL).accid, undefined);
  });

  it('is malformed when the body is not JSON, not an object, or lacks the page fields', () => {
    const cases = [
      '<html>busy</html>',
      '{"currentPage":1,"totalPages":2,"txs":[',
      '',
      '[]',
      '"ok"',
      page({ totalPages: 1, txs: [] }),
      page({ currentPage: 1, txs: [] }),
      page({ currentPage: '1', totalPages: 1, txs: [] }),
      page({ currentPage: 1, totalPages: -1, txs: [] }),
      page({ currentPage: 1, totalPages: 1, txs: { 0: record(1) } }),
      page({ currentPage: 1, totalPages: 1, accid: 5, txs: [] }),
    ];
    for (const body of cases) {
      assert.throws(
        () => parseTxPage(body, URL),
        (error: unknown) => error instanceof MalformedResponseError && error.url === URL && error.retryable,
        body,
      );
    }
  });
});

describe('a key-paging page', () => {
  it('returns the records and whether more follow', () => {
    const result = parseTxKeyPage(page({ txs: [record(1), record(2, { fee: -1 })], hasNextPage: true }), URL);
    assert.deepEqual(
      result.txs.map((tx) => tx.rawId),
      [1],
    );
    assert.equal(result.rejected.length, 1);
    assert.equal(result.hasNextPage, true);
  });

  it('is malformed without hasNextPage', () => {
    assert.throws(() => parseTxKeyPage(page({ txs: [] }), URL), MalformedResponseError);
  });

  it('says so when the deployment answered with page numbers instead', () => {
    assert.throws(
      () => parseTxKeyPage(page({ currentPage: 1, totalPages: 3, txs: [] }), URL),
      /no key paging/,
    );
  });
});

describe('a single look-up answer', () => {
  it('returns the record of {tx: record}', () => {
    assert.equal(parseSingleTx(page({ tx: record(5) }), URL).rawId, 5);
  });

  it('accepts the record sent unwrapped', () => {
    assert.equal(parseSingleTx(page(record(6)), URL).rawId, 6);
  });

  it('throws InvalidRecordError for a malformed record', () => {
    assert.throws(
      () => parseSingleTx(page({ tx: record(5, { amount: 1 }) }), URL),
      (error: unknown) =>
        error instanceof InvalidRecordError && /amount/.test(error.reason) && !error.retryable,
    );
  });

  it('is malformed when it holds no record', () => {
    for (const body of ['nope', page({ tx: null }), page({ status: 'ok' })]) {
      assert.throws(() => parseSingleTx(body, URL), MalformedResponseError);
    }
  });
});
