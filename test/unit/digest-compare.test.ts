import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDigest } from '../../src/client/sim-digest.js';
import { compareDigests, type DigestSource } from '../../src/digest/compare-digests.js';
import { formatComparison } from '../../src/digest/digest-report.js';
import { digestRecords, resolveDigestQuery } from '../../src/digest/range-digest.js';
import type { LedgerTx } from '../../src/domain/model.js';
import { MalformedResponseError } from '../../src/errors.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import { withSeed } from '../helpers/seed.js';

/** A side over an array, counting the digests asked of it. */
function source(records: () => readonly LedgerTx[]): DigestSource & { calls: number } {
  const side = {
    calls: 0,
    async digest(query: Parameters<DigestSource['digest']>[0], options?: { lines?: boolean }) {
      side.calls++;
      return digestRecords(records(), query, { keepLines: options?.lines === true });
    },
  };
  return side;
}

function ledger(count: number): LedgerTx[] {
  return Array.from({ length: count }, (_, i) =>
    makeLedgerTx({ rawId: i + 1, amount: String(5000 + i), nonce: String(i) }),
  );
}

const query = resolveDigestQuery({ rangeSize: 1000 });
const names = { mirror: 'this mirror', other: 'the other' };

describe('comparing two digests', () => {
  it('finds two equal copies equal', async () => {
    const records = ledger(2500);
    const comparison = await compareDigests({
      mirror: source(() => records),
      other: source(() => [...records].reverse()),
      query,
    });
    assert.equal(comparison.equal, true);
    assert.deepEqual(comparison.differences, []);
    assert.equal(comparison.ranges, 3);
    assert.match(formatComparison(comparison, names).join('\n'), /2500 records.*EQUAL/);
  });

  it('narrows a changed field down to its record and names the field, in few requests', async () => {
    await withSeed(async (rng) => {
      const records = ledger(5000);
      const at = rng.int(0, records.length - 1);
      const changed = [...records];
      changed[at] = { ...records[at]!, amount: '1' };
      const mirror = source(() => records);
      const other = source(() => changed);
      const comparison = await compareDigests({ mirror, other, query });
      const rawId = at + 1;
      const rangeFrom = Math.floor(rawId / 1000) * 1000;
      assert.equal(comparison.equal, false);
      assert.deepEqual(comparison.differences, [
        {
          from: rangeFrom,
          to: rangeFrom + 999,
          mirror: comparison.differences[0]?.mirror,
          other: comparison.differences[0]?.other,
          first: { rawId, missingOn: null, fields: ['amount'] },
        },
      ]);
      // 1000 rawIds → 63 → leaf: the whole digest, one narrowing step and the lines.
      assert.equal(mirror.calls, 3);
      assert.equal(other.calls, 3);
      assert.match(
        formatComparison(comparison, names).join('\n'),
        new RegExp(`first difference at rawId ${rawId}: amount differs`),
      );
    });
  });

  it('names the side that lacks a record, and the first difference of each range', async () => {
    const records = ledger(3000);
    const lacking = records
      .filter((tx) => tx.rawId !== 1234 && tx.rawId !== 1500)
      .map((tx) => (tx.rawId === 2400 ? { ...tx, to: 'someone else' } : tx));
    const comparison = await compareDigests({
      mirror: source(() => lacking),
      other: source(() => records),
      query,
    });
    assert.deepEqual(
      comparison.differences.map((d) => d.first),
      [
        { rawId: 1234, missingOn: 'mirror', fields: [] },
        { rawId: 2400, missingOn: null, fields: ['to'] },
      ],
    );
    const reversed = await compareDigests({
      mirror: source(() => records),
      other: source(() => lacking),
      query,
    });
    assert.deepEqual(
      reversed.differences.map((d) => d.first),
      [
        { rawId: 1234, missingOn: 'other', fields: [] },
        { rawId: 2400, missingOn: null, fields: ['to'] },
      ],
    );
    assert.match(formatComparison(reversed, names).join('\n'), /rawId 1234: missing in the other/);
  });

  it('reports a range one side lacks entirely', async () => {
    const records = ledger(2500);
    const comparison = await compareDigests({
      mirror: source(() => records.filter((tx) => tx.rawId < 2000)),
      other: source(() => records),
      query,
    });
    assert.deepEqual(
      comparison.differences.map(({ from, to, mirror, other, first }) => ({
        from,
        to,
        mirror,
        other: other?.count,
        first,
      })),
      [
        {
          from: 2000,
          to: 2999,
          mirror: null,
          other: 501,
          first: { rawId: 2000, missingOn: 'mirror', fields: [] },
        },
      ],
    );
  });

  it('says so when the difference vanished while it was narrowed down (records changed meanwhile)', async () => {
    const records = ledger(1500);
    let changed = records.map((tx) => (tx.rawId === 700 ? { ...tx, status: 'confirmed' } : tx));
    const other = source(() => changed);
    let looks = 0;
    const mirror: DigestSource = {
      async digest(q, options) {
        // The other side settles between the first look and the narrowing.
        if (++looks === 2) changed = records;
        return digestRecords(records, q, { keepLines: options?.lines === true });
      },
    };
    const comparison = await compareDigests({ mirror, other, query });
    assert.equal(comparison.differences.length, 1);
    assert.equal(comparison.differences[0]?.first, null);
    assert.equal(comparison.differences[0]?.unresolved, 'changed');
    assert.match(formatComparison(comparison, names).join('\n'), /changed during the comparison/);
  });

  it('narrows down at most narrowLimit ranges', async () => {
    const records = ledger(3500);
    const comparison = await compareDigests({
      mirror: source(() => records),
      other: source(() => []),
      query,
      narrowLimit: 2,
    });
    assert.deepEqual(
      comparison.differences.map((d) => [d.from, d.first?.rawId ?? null, d.unresolved ?? null]),
      [
        [0, 1, null],
        [1000, 1000, null],
        [2000, null, 'limit'],
        [3000, null, 'limit'],
      ],
    );
  });
});

describe("the simulator's digest answer", () => {
  const url = 'http://sim/_sim/digest';

  it('is read back as the digest it was made from, lines included', () => {
    const digest = digestRecords(ledger(30), { rangeSize: 10 }, { keepLines: true });
    assert.deepEqual(parseDigest(JSON.stringify(digest), url), digest);
  });

  it('is refused when its shape is wrong', () => {
    const good = digestRecords(ledger(3), {}, { keepLines: true });
    const bodies = [
      'not json',
      '[]',
      JSON.stringify({ ...good, hash: 1 }),
      JSON.stringify({ ...good, to: 'all' }),
      JSON.stringify({ ...good, ranges: [{ from: 0, to: 9, count: -1, hash: 'h' }] }),
      JSON.stringify({ ...good, ranges: [{ ...good.ranges[0], lines: ['{"rawId":1}'] }] }),
    ];
    for (const body of bodies) assert.throws(() => parseDigest(body, url), MalformedResponseError, body);
  });
});
