import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createTokenTagMatcher,
  deriveTokenTag,
  encodeTransaction,
  parseBundleItems,
  pendingReason,
} from '../../src/db/write/encode.js';

import { prepareBatch } from '../../src/db/write/prepare-batch.js';
import { recomputeLedgerHash, signedMessage } from '../../src/domain/integrity.js';
import type { LedgerTx } from '../../src/domain/model.js';
import { InvalidRecordError } from '../../src/errors.js';
import { makeLedgerTx } from '../helpers/database.js';
import { testAccount } from '../helpers/evm-signer.js';

const BIG = '1'.repeat(78);

function bundleData(items: unknown[]): string {
  return JSON.stringify({ bundle: { items, expiration: 1700000000, salt: 'uuid', version: 'v1', sigs: {} } });
}

describe('encodeTransaction: integrity checks', () => {
  const account = testAccount();
  const signed = (overrides: Partial<LedgerTx> = {}): LedgerTx => {
    const tx = makeLedgerTx({ from: account.address, ...overrides });
    return { ...tx, sig: account.sign(signedMessage(tx)!), ledgerHash: recomputeLedgerHash(tx)! };
  };

  it('stores ok for a record that is what its sender signed, checking the signature only when asked', () => {
    const tx = signed();
    assert.equal(encodeTransaction(tx).row.hash_check, 'ok');
    assert.equal(encodeTransaction(tx).row.signature_check, null);
    assert.equal(encodeTransaction(tx, { checkSignatures: true }).row.signature_check, 'ok');
  });

  it('stores a record changed after signing, flagged mismatch in both checks', () => {
    const tampered = { ...signed(), amount: '999999' };
    const { row } = encodeTransaction(tampered, { checkSignatures: true });
    assert.equal(row.amount, '999999', 'the record is stored as served');
    assert.equal(row.hash_check, 'mismatch');
    assert.equal(row.signature_check, 'mismatch');
  });

  it('checks the values as served, before amounts lose their leading zeros', () => {
    const tx = signed({ amount: '0100' });
    const { row } = encodeTransaction(tx, { checkSignatures: true });
    assert.equal(row.amount, '100');
    assert.equal(row.hash_check, 'ok');
    assert.equal(row.signature_check, 'ok');
  });

  it('leaves the signature of a sender that is not an EVM account unknown', () => {
    const tx = signed({ from: 'arweave-account-id' });
    assert.equal(encodeTransaction(tx, { checkSignatures: true }).row.signature_check, 'unknown');
  });

  it('keeps the batch and its mismatches together in prepareBatch', () => {
    const batch = prepareBatch(
      [signed({ rawId: 1 }), { ...signed({ rawId: 2, nonce: '2' }), to: 'someone-else' }],
      {
        now: new Date(0),
        burnWindowMs: 0,
        checkSignatures: true,
      },
    );
    assert.deepEqual(
      batch.records.map((r) => [r.row.raw_id, r.row.hash_check, r.row.signature_check]),
      [
        [1, 'ok', 'ok'],
        [2, 'mismatch', 'mismatch'],
      ],
    );
    assert.deepEqual(batch.rejected, []);
  });
});

describe('encodeTransaction', () => {
  it('maps every wire field to its column', () => {
    const tx: LedgerTx = makeLedgerTx({
      rawId: 42,
      id: 'batch-9',
      tokenSymbol: 'AR',
      action: 'burn',
      from: 'arAccount_Case',
      to: '0xTo00000000000000000000000000000000000003',
      amount: BIG,
      fee: '7',
      feeRecipient: 'feeAcc',
      nonce: '1700000000123',
      tokenID: 'xyz-ArId',
      chainType: 'arweave',
      chainID: '0',
      data: '{"targetChainType":"arweave"}',
      version: '',
      sig: '0xdeadbeef',
      ledgerHash: '0xh42',
      status: 'packaged',
      internalStatus: '{"status":"failed","index":2,"msg":"err_x"}',
      internalStatusParsed: { status: 'failed', json: { status: 'failed', index: 2, msg: 'err_x' } },
      timestamp: 1_700_000_000_500,
      targetChainTxHash: 'arTxHash',
      express: { chainTxHash: 'c', withdrawFee: '5', refundLedgerHash: 'r', err: 'e' },
    });
    const { row, items, pending } = encodeTransaction(tx);
    assert.deepEqual(row, {
      raw_id: 42,
      record_id: 'batch-9',
      token_symbol: 'AR',
      action: 'burn',
      from_account: 'arAccount_Case',
      to_account: '0xTo00000000000000000000000000000000000003',
      amount: BIG,
      fee: '7',
      fee_recipient: 'feeAcc',
      nonce: '1700000000123',
      token_id: 'xyz-ArId',
      chain_type: 'arweave',
      chain_id: '0',
      data: '{"targetChainType":"arweave"}',
      version: '',
      sig: '0xdeadbeef',
      ledger_hash: '0xh42',
      status: 'packaged',
      internal_status: '{"status":"failed","index":2,"msg":"err_x"}',
      internal_status_code: 'failed',
      internal_status_json: { status: 'failed', index: 2, msg: 'err_x' },
      timestamp_ms: 1_700_000_000_500,
      ledger_time: '2023-11-14T22:13:20.500Z',
      target_chain_tx_hash: 'arTxHash',
      express_chain_tx_hash: 'c',
      express_withdraw_fee: '5',
      express_refund_ledger_hash: 'r',
      express_err: 'e',
      token_tag: 'arweave-ar-xyz-ArId',
      // Not the hash of these fields; signatures are not checked unless asked.
      hash_check: 'mismatch',
      signature_check: null,
    });
    assert.deepEqual(items, []);
    assert.equal(pending, null);
  });

  it('keeps ledger_time null while the timestamp is 0, and the record pending', () => {
    const { row, pending } = encodeTransaction(
      makeLedgerTx({
        timestamp: 0,
        status: 'confirmed',
        id: '',
        internalStatus: '',
        internalStatusParsed: null,
      }),
    );
    assert.equal(row.ledger_time, null);
    assert.equal(row.timestamp_ms, 0);
    assert.equal(row.internal_status, '');
    assert.equal(row.internal_status_code, null);
    assert.equal(row.internal_status_json, null);
    assert.equal(pending, 'status');
  });

  it('keeps a bare-word internal status as its code', () => {
    const { row } = encodeTransaction(
      makeLedgerTx({
        internalStatus: 'success',
        internalStatusParsed: { status: 'success', json: { status: 'success' } },
      }),
    );
    assert.equal(row.internal_status, 'success');
    assert.equal(row.internal_status_code, 'success');
  });

  it('keeps 78-digit amounts exactly and drops leading zeros only', () => {
    const { row } = encodeTransaction(
      makeLedgerTx({ amount: `000${BIG}`, fee: '0', nonce: '99999999999999999999' }),
    );
    assert.equal(row.amount, BIG);
    assert.equal(row.fee, '0');
    assert.equal(row.nonce, '99999999999999999999');
  });

  for (const [field, value] of [
    ['amount', '1.5'],
    ['amount', '-1'],
    ['fee', ''],
    ['amount', '1e18'],
    ['nonce', 'abc'],
  ] as const) {
    it(`refuses ${field} = ${JSON.stringify(value)} with a reason naming it`, () => {
      assert.throws(
        () => encodeTransaction(makeLedgerTx({ [field]: value })),
        (error: unknown) => error instanceof InvalidRecordError && error.reason.startsWith(field),
      );
    });
  }

  it('refuses text PostgreSQL cannot hold rather than failing the whole batch', () => {
    assert.throws(() => encodeTransaction(makeLedgerTx({ data: 'a\u0000b' })), InvalidRecordError);
    assert.throws(() => encodeTransaction(makeLedgerTx({ sig: '\uD800' })), InvalidRecordError);
    assert.doesNotThrow(() => encodeTransaction(makeLedgerTx({ data: 'emoji \u{1F600}' })));
  });

  it('matches the derived tag against /info tags case-insensitively', () => {
    const tx = makeLedgerTx({ tokenSymbol: 'ar', chainType: 'Arweave', tokenID: 'xyz' });
    assert.equal(encodeTransaction(tx).row.token_tag, 'arweave-ar-xyz');
    assert.equal(
      encodeTransaction(tx, { knownTags: ['arweave-AR-xyz', 'ethereum-usdc-0x1'] }).row.token_tag,
      'arweave-AR-xyz',
    );
    assert.equal(encodeTransaction(tx, { knownTags: ['arweave-ar-other'] }).row.token_tag, 'arweave-ar-xyz');
  });
});

describe('deriveTokenTag', () => {
  it('lower-cases chain type, symbol and EVM ids, and keeps other ids as sent', () => {
    assert.equal(
      deriveTokenTag({
        chainType: 'ethereum',
        tokenSymbol: 'USDC',
        tokenID: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      }),
      'ethereum-usdc-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
    );
    assert.equal(
      deriveTokenTag({ chainType: 'arweave', tokenSymbol: 'AR', tokenID: 'AbC-_x' }),
      'arweave-ar-AbC-_x',
    );
  });

  it('handles multi-chain tokens part by part', () => {
    assert.equal(
      deriveTokenTag({
        chainType: 'arweave,ethereum',
        tokenSymbol: 'AR',
        tokenID: 'xyz,0x4fADC7A98f2Dc96510e42dD1A74141eEae0C1543',
      }),
      'arweave,ethereum-ar-xyz,0x4fadc7a98f2dc96510e42dd1a74141eeae0c1543',
    );
  });

  it('prefers an exact /info match over a case-folded one', () => {
    const match = createTokenTagMatcher(['bsc-x-AbC', 'bsc-x-abc']);
    assert.equal(match('bsc-x-abc'), 'bsc-x-abc');
    assert.equal(match('bsc-x-AbC'), 'bsc-x-AbC');
    assert.equal(match('BSC-X-ABC'), 'bsc-x-AbC');
    assert.equal(match('bsc-y-1'), 'bsc-y-1');
  });
});

describe('parseBundleItems', () => {
  const item = (n: number) => ({
    tag: `t${n}`,
    chainID: '1',
    from: `f${n}`,
    to: `t${n}`,
    amount: `${n}${BIG}`,
  });

  it('lists every item with its index', () => {
    assert.deepEqual(parseBundleItems(5, bundleData([item(1), item(2)])), [
      {
        raw_id: 5,
        item_index: 0,
        tag: 't1',
        chain_id: '1',
        from_account: 'f1',
        to_account: 't1',
        amount: `1${BIG}`,
      },
      {
        raw_id: 5,
        item_index: 1,
        tag: 't2',
        chain_id: '1',
        from_account: 'f2',
        to_account: 't2',
        amount: `2${BIG}`,
      },
    ]);
  });

  it('lists the items of a failed bundle too (the record says it failed)', () => {
    const { items, row } = encodeTransaction(
      makeLedgerTx({
        action: 'bundle',
        data: bundleData([item(1)]),
        internalStatus: '{"status":"failed","index":0,"msg":"err_insufficient_balance"}',
        internalStatusParsed: {
          status: 'failed',
          json: { status: 'failed', index: 0, msg: 'err_insufficient_balance' },
        },
      }),
    );
    assert.equal(items.length, 1);
    assert.equal(row.internal_status_code, 'failed');
  });

  it('reads a bundle given as JSON text inside data', () => {
    const data = JSON.stringify({ bundle: JSON.stringify({ items: [item(3)] }) });
    assert.equal(parseBundleItems(1, data).length, 1);
  });

  it('reads a bundle whose key is spelled with a JSON escape', () => {
    const data = bundleData([item(4)]).replace('"bundle"', '"bun\\u0064le"');
    assert.ok(!data.includes('bundle'));
    assert.equal(parseBundleItems(1, data).length, 1);
  });

  for (const [label, data] of [
    ['empty data', ''],
    ['not JSON', '{"bundle": '],
    ['no items', '{"bundle":{}}'],
    ['items not an array', '{"bundle":{"items":{}}}'],
    ['an item not an object', bundleData([item(1), 'x'])],
    ['a decimal amount', bundleData([{ ...item(1), amount: '1.5' }])],
    ['a numeric amount', bundleData([{ ...item(1), amount: 5 }])],
    ['a NUL in a field', bundleData([{ ...item(1), to: 'a\u0000' }])],
  ] as const) {
    it(`keeps the record and stores no items for ${label}`, () => {
      const encoded = encodeTransaction(makeLedgerTx({ action: 'bundle', data }));
      assert.deepEqual(encoded.items, []);
      assert.equal(encoded.row.data, data);
    });
  }

  it('parses items only for bundles', () => {
    assert.deepEqual(
      encodeTransaction(makeLedgerTx({ action: 'transfer', data: bundleData([item(1)]) })).items,
      [],
    );
  });
});

describe('pendingReason', () => {
  const now = new Date('2026-01-02T00:00:00Z');
  const day = 24 * 3600 * 1000;
  it('is final only when packaged', () => {
    assert.equal(
      pendingReason(
        { status: 'confirmed', action: 'transfer', targetChainTxHash: '', timestamp: 0 },
        now,
        day,
      ),
      'status',
    );
    assert.equal(
      pendingReason({ status: 'someday', action: 'mint', targetChainTxHash: 'x', timestamp: 1 }, now, day),
      'status',
    );
    assert.equal(
      pendingReason(
        { status: 'packaged', action: 'transfer', targetChainTxHash: '', timestamp: 1 },
        now,
        day,
      ),
      null,
    );
  });
  it('waits on a recent burn for its target-chain hash, not on an old one', () => {
    const recent = now.getTime() - day / 2;
    const old = now.getTime() - 2 * day;
    assert.equal(
      pendingReason(
        { status: 'packaged', action: 'burn', targetChainTxHash: '', timestamp: recent },
        now,
        day,
      ),
      'burn',
    );
    assert.equal(
      pendingReason({ status: 'packaged', action: 'burn', targetChainTxHash: '', timestamp: old }, now, day),
      null,
    );
    assert.equal(
      pendingReason(
        { status: 'packaged', action: 'burn', targetChainTxHash: 'h', timestamp: recent },
        now,
        day,
      ),
      null,
    );
  });
});

describe('prepareBatch', () => {
  const options = { now: new Date(), burnWindowMs: 1000 };
  it('keeps the last of several records with one rawId, sorted by rawId', () => {
    const batch = prepareBatch(
      [
        makeLedgerTx({ rawId: 3 }),
        makeLedgerTx({ rawId: 1, status: 'confirmed' }),
        makeLedgerTx({ rawId: 1, status: 'packaged' }),
      ],
      options,
    );
    assert.deepEqual(
      batch.records.map((r) => [r.row.raw_id, r.row.status]),
      [
        [1, 'packaged'],
        [3, 'packaged'],
      ],
    );
    assert.deepEqual(batch.divergent, []);
    assert.deepEqual(batch.rejected, []);
  });

  it('keeps the first sighting when a later one disagrees on an immutable field, and sets the later one aside', () => {
    const batch = prepareBatch(
      [
        makeLedgerTx({ rawId: 1, status: 'confirmed', amount: '5' }),
        makeLedgerTx({ rawId: 1, status: 'packaged', amount: '7' }),
        makeLedgerTx({ rawId: 1, status: 'packaged', amount: '005' }),
      ],
      { ...options, pages: [1, 2, 3] },
    );
    assert.deepEqual(
      batch.records.map((r) => [r.row.amount, r.row.status, r.page]),
      [['5', 'packaged', 1]],
    );
    assert.deepEqual(
      batch.divergent.map((r) => [r.row.amount, r.page]),
      [['7', 2]],
    );
  });

  it('sets aside what cannot be encoded, and a second rawId claiming one ledger hash', () => {
    const batch = prepareBatch(
      [
        makeLedgerTx({ rawId: 1, amount: 'x' }),
        makeLedgerTx({ rawId: 2, ledgerHash: '0xsame' }),
        makeLedgerTx({ rawId: 3, ledgerHash: '0xsame' }),
      ],
      options,
    );
    assert.deepEqual(
      batch.records.map((r) => r.row.raw_id),
      [2],
    );
    assert.deepEqual(
      batch.rejected.map((r) => [r.rawId, r.reason.split(' ')[0]]),
      [
        [1, 'amount'],
        [3, 'ledgerHash'],
      ],
    );
  });
});
