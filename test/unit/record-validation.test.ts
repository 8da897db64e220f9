import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTxRecord, tryParseTxRecord } from '../../src/client/record.js';
import { InvalidRecordError } from '../../src/errors.js';

/** A packaged transfer exactly as the service lists it. */
function wire(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    rawId: 4242,
    id: '0x1f9c3a8e5c3b2a1d',
    tokenSymbol: 'USDC',
    action: 'transfer',
    from: '0x61EbF673c200646236B2c53465bcA0699455d5FA',
    to: 'eid-7f_a,b',
    amount: '1000000',
    fee: '0',
    feeRecipient: '0x6451eB7f668de69Fb4C943Db72bCF2A73DeeC6B1',
    nonce: 1_700_000_000_123,
    tokenID: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
    chainType: 'ethereum',
    chainID: '1',
    data: '',
    version: 'v1',
    sig: '0xabc',
    ledgerHash: '0x5e6f',
    status: 'packaged',
    internalStatus: '{"status":"success"}',
    timestamp: 1_700_000_001_000,
    targetChainTxHash: '',
    express: { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' },
    ...overrides,
  };
}

function without(...keys: string[]): Record<string, unknown> {
  const record = wire();
  for (const key of keys) delete record[key];
  return record;
}

function rejects(record: unknown, pattern: RegExp): InvalidRecordError {
  let caught: unknown;
  assert.throws(
    () => parseTxRecord(record),
    (error: unknown) => {
      caught = error;
      return error instanceof InvalidRecordError;
    },
  );
  const error = caught as InvalidRecordError;
  assert.match(error.reason, pattern);
  assert.equal(error.raw, JSON.stringify(record));
  return error;
}

describe('a valid transaction record', () => {
  it('keeps every field as sent, with amounts and nonce as decimal strings', () => {
    const tx = parseTxRecord(wire());
    assert.equal(tx.rawId, 4242);
    assert.equal(tx.amount, '1000000');
    assert.equal(tx.fee, '0');
    assert.equal(tx.nonce, '1700000000123');
    assert.equal(tx.timestamp, 1_700_000_001_000);
    assert.equal(tx.from, '0x61EbF673c200646236B2c53465bcA0699455d5FA');
    assert.equal(tx.to, 'eid-7f_a,b');
    assert.equal(tx.internalStatus, '{"status":"success"}');
    assert.deepEqual(tx.internalStatusParsed, { status: 'success', json: { status: 'success' } });
    assert.deepEqual(tx.express, { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' });
  });

  it('keeps a 78-digit amount (2^256) exactly', () => {
    const big = (2n ** 256n).toString();
    assert.equal(big.length, 78);
    const tx = parseTxRecord(wire({ amount: big, fee: big }));
    assert.equal(tx.amount, big);
    assert.equal(tx.fee, big);
  });

  it('parses an old record whose internalStatus is the bare word success', () => {
    const tx = parseTxRecord(wire({ internalStatus: 'success' }));
    assert.equal(tx.internalStatus, 'success');
    assert.deepEqual(tx.internalStatusParsed, { status: 'success', json: { status: 'success' } });
  });

  it('parses a failed bundle status with its index and message', () => {
    const raw = '{"status":"failed","index":1,"msg":"err_insufficient_balance"}';
    const tx = parseTxRecord(wire({ action: 'bundle', internalStatus: raw }));
    assert.equal(tx.internalStatus, raw);
    assert.equal(tx.internalStatusParsed?.status, 'failed');
    assert.deepEqual(tx.internalStatusParsed?.json, {
      status: 'failed',
      index: 1,
      msg: 'err_insufficient_balance',
    });
  });

  it('keeps comma-joined token fields and mixed-case symbols untouched', () => {
    const tx = parseTxRecord(
      wire({
        tokenSymbol: 'aR',
        tokenID: 'AR,0x4fadc7a98f2dc96510e42dd1a74141eeae0c1543',
        chainType: 'arweave,ethereum',
        chainID: '0,1',
      }),
    );
    assert.equal(tx.tokenSymbol, 'aR');
    assert.equal(tx.tokenID, 'AR,0x4fadc7a98f2dc96510e42dd1a74141eeae0c1543');
    assert.equal(tx.chainType, 'arweave,ethereum');
    assert.equal(tx.chainID, '0,1');
  });

  it('defaults the fields older records lack: version, internalStatus, express, targetChainTxHash', () => {
    const tx = parseTxRecord(without('version', 'internalStatus', 'express', 'targetChainTxHash'));
    assert.equal(tx.version, '');
    assert.equal(tx.internalStatus, '');
    assert.equal(tx.internalStatusParsed, null);
    assert.equal(tx.targetChainTxHash, '');
    assert.deepEqual(tx.express, { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' });
  });

  it('treats null optional fields like absent ones, and fills missing express fields', () => {
    const tx = parseTxRecord(
      wire({ version: null, internalStatus: null, targetChainTxHash: null, express: { err: 'err_x' } }),
    );
    assert.equal(tx.version, '');
    assert.equal(tx.internalStatusParsed, null);
    assert.deepEqual(tx.express, { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: 'err_x' });
  });

  it('accepts a record just confirmed: empty id, timestamp 0', () => {
    const tx = parseTxRecord(wire({ id: '', timestamp: 0, status: 'confirmed' }));
    assert.equal(tx.id, '');
    assert.equal(tx.timestamp, 0);
    assert.equal(tx.status, 'confirmed');
  });

  it('stores actions and statuses beyond the documented ones', () => {
    for (const action of ['set', 'register', 'setAcc', 'ownership']) {
      assert.equal(parseTxRecord(wire({ action })).action, action);
    }
    assert.equal(parseTxRecord(wire({ status: 'reverted-later' })).status, 'reverted-later');
  });

  it('accepts a nonce sent as a digit string, and keeps it as one', () => {
    assert.equal(parseTxRecord(wire({ nonce: '1700000000123' })).nonce, '1700000000123');
    assert.equal(parseTxRecord(wire({ nonce: 0 })).nonce, '0');
  });

  it('accepts an internalStatus sent as an object rather than a string', () => {
    const tx = parseTxRecord(wire({ internalStatus: { status: 'success' } }));
    assert.equal(tx.internalStatus, '{"status":"success"}');
    assert.equal(tx.internalStatusParsed?.status, 'success');
  });

  it('ignores fields it does not know', () => {
    const tx = parseTxRecord(wire({ somethingNew: [1, 2] }));
    assert.equal('somethingNew' in tx, false);
  });
});

describe('an invalid transaction record', () => {
  it('is rejected without rawId, since it cannot be keyed', () => {
    rejects(without('rawId'), /rawId is missing/);
  });

  it('is rejected with a rawId that is negative, fractional, a string or unsafe', () => {
    for (const rawId of [-1, 1.5, '12', 2 ** 53, null]) rejects(wire({ rawId }), /rawId/);
  });

  it('is rejected without a ledgerHash, or with an empty one', () => {
    rejects(without('ledgerHash'), /ledgerHash/);
    rejects(wire({ ledgerHash: '' }), /ledgerHash/);
  });

  it('is rejected with amounts that are not decimal digit strings: 1.5, -1, 1e3, numbers, empty', () => {
    for (const amount of ['1.5', '-1', '1e3', ' 1', '0x10', '', 100, 1e21, null])
      rejects(wire({ amount }), /amount/);
    for (const fee of ['1.5', '-1', '1e3', 5]) rejects(wire({ fee }), /fee/);
  });

  it('is rejected with a nonce that is negative, fractional, unsafe or past 64 bits', () => {
    for (const nonce of [-1, 1.5, 2 ** 53, 'abc', '99999999999999999999', null])
      rejects(wire({ nonce }), /nonce/);
  });

  it('is rejected with a timestamp that is not a non-negative integer', () => {
    for (const timestamp of [-5, 1.5, '1700000000000', null]) rejects(wire({ timestamp }), /timestamp/);
  });

  it('is rejected when a required text field is missing or not a string', () => {
    rejects(without('from'), /from must be a string/);
    rejects(wire({ action: 7 }), /action must be a string/);
    rejects(wire({ data: null }), /data must be a string/);
  });

  it('is rejected with an unreadable internalStatus or express', () => {
    rejects(wire({ internalStatus: '{"status":' }), /internalStatus/);
    rejects(wire({ internalStatus: '{"code":1}' }), /internalStatus/);
    rejects(wire({ internalStatus: 5 }), /internalStatus/);
    rejects(wire({ express: 'none' }), /express/);
    rejects(wire({ express: { err: 1 } }), /express\.err/);
  });

  it('is rejected when it is not an object at all', () => {
    for (const value of [null, 'tx', 3, [wire()]]) rejects(value, /not an object/);
  });

  it('reports what keys it could read, for the rejected-records report', () => {
    const result = tryParseTxRecord(wire({ amount: '1.5' }));
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.rejected.rawId, 4242);
    assert.equal(result.rejected.ledgerHash, '0x5e6f');
    assert.match(result.rejected.reason, /amount/);
    assert.deepEqual(JSON.parse(result.rejected.raw), wire({ amount: '1.5' }));
  });
});
