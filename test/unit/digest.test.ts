import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { canonicalLine, DIGEST_FIELDS, differingFields } from '../../src/digest/canonical-line.js';
import { createDigestBuilder, digestRecords } from '../../src/digest/range-digest.js';
import type { LedgerTx } from '../../src/domain/model.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import { withSeed } from '../helpers/seed.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Records at the given rawIds, each a little different. */
function records(rawIds: readonly number[]): LedgerTx[] {
  return rawIds.map((rawId) => makeLedgerTx({ rawId, amount: String(1000 + rawId), nonce: String(rawId) }));
}

describe('the canonical line', () => {
  it('holds every field in the fixed order, numerics without leading zeros', () => {
    const tx = makeLedgerTx({
      rawId: 7,
      amount: '000120',
      fee: '00',
      nonce: '0042',
      version: '',
      express: { chainTxHash: '0xc', withdrawFee: '5', refundLedgerHash: '', err: 'e' },
    });
    const values = JSON.parse(canonicalLine(tx)) as unknown[];
    assert.equal(values.length, DIGEST_FIELDS.length);
    const byName = Object.fromEntries(DIGEST_FIELDS.map((name, i) => [name, values[i]]));
    assert.deepEqual(byName, {
      rawId: 7,
      tokenSymbol: tx.tokenSymbol,
      action: tx.action,
      from: tx.from,
      to: tx.to,
      amount: '120',
      fee: '0',
      feeRecipient: tx.feeRecipient,
      nonce: '42',
      tokenID: tx.tokenID,
      chainType: tx.chainType,
      chainID: tx.chainID,
      data: tx.data,
      version: '',
      sig: tx.sig,
      ledgerHash: tx.ledgerHash,
      status: tx.status,
      id: tx.id,
      timestamp: tx.timestamp,
      internalStatus: tx.internalStatus,
      targetChainTxHash: tx.targetChainTxHash,
      'express.chainTxHash': '0xc',
      'express.withdrawFee': '5',
      'express.refundLedgerHash': '',
      'express.err': 'e',
    });
  });

  it('ignores what is not stored (the parsed internal status) and keeps line breaks inside one line', () => {
    const a = makeLedgerTx({ data: 'two\nlines' });
    const b: LedgerTx = { ...a, internalStatusParsed: null, tokenTag: 'extra' } as LedgerTx;
    assert.equal(canonicalLine(a), canonicalLine(b));
    assert.equal(canonicalLine(a).includes('\n'), false);
  });

  it('names the differing fields of two lines of one record', () => {
    const a = makeLedgerTx({ rawId: 3 });
    const b = makeLedgerTx({ rawId: 3, amount: '999', status: 'confirmed' });
    assert.deepEqual(differingFields(canonicalLine(a), canonicalLine(b)), ['amount', 'status']);
    assert.deepEqual(differingFields(canonicalLine(a), canonicalLine(a)), []);
    assert.deepEqual(differingFields(canonicalLine(a), 'not a line'), [...DIGEST_FIELDS]);
  });
});

describe('the range digest', () => {
  it('hashes each range over its lines joined by newlines, and the whole over the range hashes', () => {
    const input = records([1, 2, 10_000, 25_000]);
    const digest = digestRecords(input);
    const line = (i: number) => canonicalLine(input[i]!);
    const expected = [
      { from: 0, to: 9_999, count: 2, hash: sha256(`${line(0)}\n${line(1)}`) },
      { from: 10_000, to: 19_999, count: 1, hash: sha256(line(2)) },
      { from: 20_000, to: 29_999, count: 1, hash: sha256(line(3)) },
    ];
    assert.deepEqual(digest, {
      rangeSize: 10_000,
      from: 0,
      to: null,
      count: 4,
      hash: sha256(expected.map((r) => r.hash).join('\n')),
      ranges: expected,
    });
  });

  it('does not depend on the order of its input', async () => {
    await withSeed((rng) => {
      const input = records(Array.from({ length: 300 }, (_, i) => i * 7 + rng.int(0, 6)));
      const shuffled = [...input];
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = rng.int(0, i);
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      assert.deepEqual(digestRecords(shuffled, { rangeSize: 100 }), digestRecords(input, { rangeSize: 100 }));
    });
  });

  it('one changed field changes exactly one range, and the whole', async () => {
    await withSeed((rng) => {
      const input = records(Array.from({ length: 500 }, (_, i) => i + 1));
      const before = digestRecords(input, { rangeSize: 50 });
      const field = rng.int(0, 2);
      const at = rng.int(0, input.length - 1);
      const changed = [...input];
      const tx = input[at]!;
      changed[at] =
        field === 0
          ? { ...tx, amount: `${tx.amount}1` }
          : field === 1
            ? { ...tx, status: 'confirmed' }
            : { ...tx, express: { ...tx.express, err: 'x' } };
      const after = digestRecords(changed, { rangeSize: 50 });
      const differing = before.ranges.filter((range, i) => range.hash !== after.ranges[i]?.hash);
      assert.equal(after.ranges.length, before.ranges.length);
      assert.deepEqual(
        differing.map((r) => r.from),
        [Math.floor(tx.rawId / 50) * 50],
      );
      assert.notEqual(after.hash, before.hash);
      assert.equal(after.count, before.count);
    });
  });

  it('of no record is empty, with the hash of the empty text', () => {
    assert.deepEqual(digestRecords([]), {
      rangeSize: 10_000,
      from: 0,
      to: null,
      count: 0,
      hash: sha256(''),
      ranges: [],
    });
  });

  it('clips ranges to the bounds, skips records outside them and leaves out empty ranges', () => {
    const input = records([5, 15, 35, 41, 60]);
    const digest = digestRecords(input, { from: 10, to: 45, rangeSize: 10 });
    assert.deepEqual(
      digest.ranges.map(({ from, to, count }) => ({ from, to, count })),
      [
        { from: 10, to: 19, count: 1 },
        { from: 30, to: 39, count: 1 },
        { from: 40, to: 45, count: 1 },
      ],
    );
    assert.equal(digest.count, 3);
    assert.equal(digest.to, 45);
  });

  it('keeps the lines when asked', () => {
    const input = records([1, 2]);
    const [range] = digestRecords(input, {}, { keepLines: true }).ranges;
    assert.deepEqual(range?.lines, input.map(canonicalLine));
    assert.equal(digestRecords(input).ranges[0]?.lines, undefined);
  });

  it('refuses records out of order, and two records with one rawId', () => {
    const builder = createDigestBuilder();
    builder.add(makeLedgerTx({ rawId: 5 }));
    assert.throws(() => builder.add(makeLedgerTx({ rawId: 4 })), /out of order/);
    assert.throws(() => digestRecords(records([3, 3])), /out of order/);
    assert.throws(() => createDigestBuilder({ rangeSize: 0 }), RangeError);
    assert.throws(() => createDigestBuilder({ from: 10, to: 9 }), RangeError);
  });
});
