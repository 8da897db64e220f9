import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checksumAddress, keccak256, personalMessageHash } from '../../src/simulator/evm.js';
import { SimulatedLedger } from '../../src/simulator/ledger.js';
import { createSimulator } from '../../src/simulator/simulator.js';
import type { GroundTruthRecord } from '../../src/simulator/types.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('simulator hashing', () => {
  it('computes Keccak-256 as Ethereum does', () => {
    assert.equal(hex(keccak256('')), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    assert.equal(hex(keccak256('abc')), '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    // Longer than one 136-byte block.
    assert.equal(hex(keccak256('a'.repeat(200))).length, 64);
    assert.notEqual(hex(keccak256('a'.repeat(200))), hex(keccak256('a'.repeat(201))));
  });

  it('writes EVM addresses in EIP-55 checksum form', () => {
    assert.equal(
      checksumAddress('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'),
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    );
    assert.equal(
      checksumAddress('0xFB6916095CA1DF60BB79CE92CE3EA74C37C5D359'),
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    );
  });

  it('hashes personal messages with the EIP-191 prefix', () => {
    // keccak256("\x19Ethereum Signed Message:\n11hello world")
    assert.equal(
      personalMessageHash('hello world'),
      '0xd9eba16ed0ecae432b71fe008c98cc872bb4cc214d3220a36f365326cf807d68',
    );
  });
});

describe('simulator data set', () => {
  const all = (records: number, seed: number | string, holeRate = 0.01): GroundTruthRecord[] => [
    ...createSimulator({ records, seed, holeRate }).records(),
  ];

  it('gives the same records for the same seed and different ones for another', () => {
    const a = all(3000, 11);
    const b = all(3000, 11);
    const c = all(3000, 12);
    assert.equal(a.length, 3000);
    assert.deepEqual(a, b);
    assert.notDeepEqual(
      a.map((r) => r.ledgerHash),
      c.map((r) => r.ledgerHash),
    );
    assert.deepEqual(all(50, 'alpha'), all(50, 'alpha'));
  });

  it('numbers records with increasing rawIds, with holes only when asked', () => {
    const holes = all(5000, 3, 0.05).map((r) => r.rawId);
    const gaps = holes.slice(1).filter((id, i) => id - holes[i]! > 1).length;
    assert.ok(holes.every((id, i) => i === 0 || id > holes[i - 1]!));
    assert.ok(gaps > 100, `expected holes, saw ${gaps}`);
    const dense = all(2000, 3, 0).map((r) => r.rawId);
    assert.deepEqual(
      dense,
      dense.map((_, i) => i + 1),
    );
  });

  it('looks like the real service: tokens, accounts, actions, odd fields', () => {
    const records = all(60_000, 5);
    const count = (pred: (r: GroundTruthRecord) => boolean) => records.filter(pred).length;
    const byAction = new Map<string, number>();
    for (const r of records) byAction.set(r.action, (byAction.get(r.action) ?? 0) + 1);
    for (const action of ['mint', 'transfer', 'burn', 'bundle', 'set'])
      assert.ok(byAction.get(action), action);
    assert.ok(byAction.get('transfer')! > byAction.get('mint')!);
    assert.ok(byAction.get('mint')! > byAction.get('set')!);

    // Several tokens, one on two chains; symbol and id case vary as senders wrote them.
    const tags = new Set(records.map((r) => r.tokenTag));
    assert.ok(tags.size >= 5);
    assert.ok(
      records.some(
        (r) => r.chainType === 'arweave,ethereum' && r.chainID === '0,1' && r.tokenID.includes(','),
      ),
    );
    assert.ok(records.some((r) => r.tokenSymbol === 'AR') && records.some((r) => r.tokenSymbol === 'ar'));
    assert.ok(
      records.some((r) => /[A-F]/.test(r.tokenID)) && records.some((r) => /^0x[0-9a-f]{40}$/.test(r.tokenID)),
    );

    // EVM accounts in checksum form (mixed case), Arweave base64url accounts.
    const evm = records.map((r) => r.from).filter((a) => /^0x[0-9a-fA-F]{40}$/.test(a));
    assert.ok(evm.length > 0 && evm.every((a) => checksumAddress(a) === a));
    assert.ok(records.some((r) => /^[A-Za-z0-9_-]{43}$/.test(r.from)));

    // Mints carry source-chain data and hash; burns name their target chain.
    const mints = records.filter((r) => r.action === 'mint');
    assert.ok(
      mints.every(
        (r) => JSON.parse(r.data).txHash === r.targetChainTxHash || r.targetChainTxHash === undefined,
      ),
    );
    for (const burn of records.filter((r) => r.action === 'burn')) {
      assert.equal(typeof JSON.parse(burn.data).targetChainType, 'string');
    }

    // Bundles move several tokens; some failed with index and msg.
    const bundles = records.filter((r) => r.action === 'bundle');
    assert.ok(bundles.every((r) => JSON.parse(r.data).bundle.items.length >= 2));
    assert.ok(
      bundles.some(
        (r) => new Set(JSON.parse(r.data).bundle.items.map((i: { tag: string }) => i.tag)).size > 1,
      ),
    );
    const failed = bundles.filter((r) => r.internalStatus.includes('failed'));
    assert.ok(failed.length > 0);
    for (const r of failed) {
      const status = JSON.parse(r.internalStatus);
      assert.equal(status.status, 'failed');
      assert.equal(typeof status.index, 'number');
      assert.match(status.msg, /^err_/);
    }

    // Fast withdrawals, versions, shared batches, old records.
    assert.ok(
      records.some((r) => r.express?.chainTxHash !== '' && r.express?.withdrawFee !== '' && r.express),
    );
    assert.ok(count((r) => r.version === 'v1') > 0 && count((r) => r.version === '') > 0);
    const batches = new Map<string, number[]>();
    for (const r of records) batches.set(r.id, [...(batches.get(r.id) ?? []), r.timestamp]);
    assert.ok([...batches.values()].some((ts) => ts.length > 1));
    assert.ok([...batches.values()].every((ts) => new Set(ts).size === 1));
    const old = records.slice(0, 500);
    assert.ok(old.some((r) => r.internalStatus === 'success'));
    assert.ok(old.some((r) => r.version === undefined) && old.some((r) => r.express === undefined));
    assert.ok(records.slice(-1000).every((r) => r.internalStatus !== 'success'));

    // Amounts: digits only, up to 78 of them.
    assert.ok(records.every((r) => /^\d{1,78}$/.test(r.amount) && /^\d+$/.test(r.fee)));
    assert.ok(records.some((r) => r.amount.length >= 60));
    assert.ok(records.every((r) => r.status === 'packaged' && r.timestamp > 0 && r.id !== ''));
  });

  it('adds records at the head as confirmed and settles them on demand', () => {
    const sim = createSimulator({ records: 100, seed: 9, packageDelayMs: 60_000 });
    const head = sim.headRawId();
    const newHead = sim.addRecords(30);
    assert.ok(newHead > head);
    assert.equal(sim.count(), 130);
    const fresh = [...sim.records({ afterRawId: head })];
    assert.equal(fresh.length, 30);
    assert.ok(fresh.every((r) => r.status === 'confirmed' && r.id === '' && r.timestamp === 0));
    sim.settleAll();
    const settled = [...sim.records({ afterRawId: head })];
    assert.ok(settled.every((r) => r.status === 'packaged' && r.id !== '' && r.timestamp > 0));
    assert.ok(settled.filter((r) => r.action === 'burn').every((r) => r.targetChainTxHash !== ''));
  });

  it('never lists two records with one ledgerHash, even when thousands arrive at once', () => {
    const sim = createSimulator({ records: 1000, seed: 42 });
    sim.addRecords(50_000);
    const records = [...sim.records()];
    assert.equal(new Set(records.map((r) => r.ledgerHash)).size, records.length);
    const nonces = records.map((r) => `${r.from} ${r.nonce}`);
    assert.equal(new Set(nonces).size, nonces.length, 'a sender never signs one nonce twice');
  });

  it('chooses malformed records by rawId, the same on every read', () => {
    const sim = createSimulator({ records: 3000, seed: 4, faults: { malformedRate: 0.05 } });
    const first = [...sim.records()].filter((r) => r.malformed).map((r) => `${r.rawId}:${r.malformed}`);
    const second = [...sim.records()].filter((r) => r.malformed).map((r) => `${r.rawId}:${r.malformed}`);
    assert.deepEqual(first, second);
    assert.ok(first.length > 90 && first.length < 220, `${first.length}`);
    for (const kind of ['bad_amount', 'missing_raw_id', 'broken_internal_status']) {
      assert.ok(
        first.some((m) => m.endsWith(kind)),
        kind,
      );
    }
    sim.setFaults({ malformedRate: 0 });
    assert.equal([...sim.records()].filter((r) => r.malformed).length, 0);
  });

  it('writes each record as exactly the JSON of its fields', () => {
    const ledger = new SimulatedLedger({
      seed: 2,
      records: 8000,
      holeRate: 0.01,
      packageDelayMs: 10,
      burnTargetDelayMs: 10,
      jsonCacheSize: 100,
      historyEndMs: Date.UTC(2026, 0, 1),
    });
    ledger.arrive(50, Date.now());
    for (let pos = 0; pos < ledger.table.count; pos++) {
      const record = ledger.render(pos);
      assert.equal(ledger.recordText(pos), JSON.stringify(record));
      const line = JSON.parse(ledger.groundTruthText(pos, { malformedRate: 0.02, tamperedRate: 0 }));
      const { tokenTag, arrivedAtMs, packagedAtMs, targetLandedAtMs, malformed, ...wire } = line;
      assert.deepEqual(wire, record);
      assert.equal(typeof tokenTag, 'string');
      assert.equal(typeof arrivedAtMs, 'number');
      assert.ok(malformed === undefined || typeof malformed === 'string');
    }
  });

  it('refuses impossible options', () => {
    assert.throws(() => createSimulator({ records: -1 }), /records/);
    assert.throws(() => createSimulator({ holeRate: 1 }), /holeRate/);
    assert.throws(() => createSimulator({ faults: { errorRate: 2 } }), /errorRate/);
    assert.throws(() => createSimulator({ faults: { bogus: 1 } as never }), /bogus/);
  });
});
