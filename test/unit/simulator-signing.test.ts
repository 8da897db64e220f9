import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import {
  addressOfPublicKey,
  checkHash,
  checkSignature,
  isEvmAddress,
  recomputeLedgerHash,
  recoverSigner,
  SIGNED_FIELDS,
} from '../../src/domain/integrity.js';
import { checksumAddress, personalMessageDigest } from '../../src/simulator/evm.js';
import { EvmKeyring } from '../../src/simulator/evm-keys.js';
import { SimulatedLedger } from '../../src/simulator/ledger.js';
import { createSimulator } from '../../src/simulator/simulator.js';
import type { GroundTruthRecord } from '../../src/simulator/types.js';

const NOW = Date.UTC(2026, 0, 2);
const signedPart = (r: GroundTruthRecord) =>
  JSON.stringify([...SIGNED_FIELDS.map((f) => r[f]), r.sig, r.ledgerHash]);

describe('simulator keys', () => {
  it('makes each EVM account from its key and signs digests as personal_sign does', () => {
    const keys = new EvmKeyring(5);
    const accounts = Array.from({ length: 130 }, () => keys.newAccount());
    assert.equal(new Set(accounts).size, 130);
    const digest = personalMessageDigest('tokenSymbol:ETH');
    for (const account of [accounts[0]!, accounts[64]!, accounts[129]!]) {
      assert.equal(checksumAddress(account), account);
      const publicKey = secp256k1.getPublicKey(secp256k1.Point.Fn.toBytes(keys.secretKeyOf(account)!), false);
      assert.equal(addressOfPublicKey(publicKey), account.toLowerCase());
      const sig = keys.sign(account.toLowerCase(), digest)!;
      assert.match(sig, /^0x[0-9a-f]{128}(1b|1c)$/);
      // A low-s signature that verifies and recovers to the account.
      const compact = Buffer.from(sig.slice(2, 130), 'hex');
      assert.ok(secp256k1.verify(compact, digest, publicKey, { prehash: false }));
      assert.equal(recoverSigner(digest, sig), account.toLowerCase());
    }
    assert.equal(keys.sign(`0x${'12'.repeat(20)}`, digest), undefined);
    const again = new EvmKeyring(5);
    assert.deepEqual(
      Array.from({ length: 3 }, () => again.newAccount()),
      accounts.slice(0, 3),
    );
    assert.notEqual(new EvmKeyring(6).newAccount(), accounts[0]);
  });
});

describe('simulator records are signed', () => {
  it('carries the real ledgerHash of every record and EVM senders’ signatures', () => {
    const sim = createSimulator({ records: 4000, seed: 8, packageDelayMs: 60_000, now: () => NOW });
    sim.addRecords(200);
    let evm = 0;
    let other = 0;
    const versions = new Set<string | undefined>();
    for (const [i, record] of [...sim.records()].entries()) {
      assert.equal(checkHash(record), 'ok', `rawId ${record.rawId}`);
      versions.add(record.version);
      // Recovery costs about a millisecond: every sender kind, a tenth of the records.
      if (i % 10 !== 0 && record.action !== 'set') continue;
      if (isEvmAddress(record.from)) {
        assert.equal(checkSignature(record), 'ok', `rawId ${record.rawId}`);
        evm++;
      } else {
        assert.equal(checkSignature(record), 'unknown', `rawId ${record.rawId}`);
        other++;
      }
    }
    assert.ok(evm > 100 && other > 50, `${evm} EVM senders, ${other} others`);
    // Old records without a version, and empty versions, are hashed as version v1.
    assert.deepEqual([...versions].sort(), ['', 'v1', undefined]);
  });

  it('keeps signed fields, hash and signature while records settle', () => {
    const sim = createSimulator({
      records: 200,
      seed: 9,
      packageDelayMs: 60_000,
      burnTargetDelayMs: 60_000,
      now: () => NOW,
    });
    const head = sim.headRawId();
    sim.addRecords(600);
    const fresh = [...sim.records({ afterRawId: head })];
    sim.settleAll();
    const settled = [...sim.records({ afterRawId: head })];
    assert.ok(settled.some((r) => r.action === 'burn' && r.targetChainTxHash !== ''));
    assert.ok(settled.some((r) => r.express?.chainTxHash !== '' || r.express?.err !== ''));
    assert.ok(settled.every((r) => r.status === 'packaged') && fresh.every((r) => r.status === 'confirmed'));
    assert.deepEqual(settled.map(signedPart), fresh.map(signedPart));
  });

  it('finds a record by its ledgerHash before it was ever served', () => {
    const settings = {
      seed: 12,
      records: 3000,
      holeRate: 0.01,
      packageDelayMs: 10,
      burnTargetDelayMs: 10,
      jsonCacheSize: 100,
      historyEndMs: NOW,
    };
    const truth = [...createSimulator({ records: 3000, seed: 12, historyEndMs: NOW }).records()];
    const ledger = new SimulatedLedger(settings);
    for (const record of [truth[2999]!, truth[0]!, truth[1500]!]) {
      const hash = recomputeLedgerHash(record)!;
      assert.equal(hash, record.ledgerHash);
      const pos = ledger.byLedgerHash(hash.toUpperCase().replace('0X', '0x'));
      assert.equal(pos === undefined ? undefined : ledger.render(pos).rawId, record.rawId);
    }
    assert.equal(ledger.byLedgerHash(`0x${'ab'.repeat(32)}`), undefined);
    assert.equal(ledger.byLedgerHash('0x1234'), undefined);
  });
});

describe('simulator tampered records', () => {
  it('serves a share tampered by rawId: the hash and the signer no longer match', () => {
    const sim = createSimulator({ records: 3000, seed: 4, faults: { tamperedRate: 0.05 } });
    const read = () => [...sim.records()];
    const records = read();
    const tampered = records.filter((r) => r.tampered);
    assert.ok(tampered.length > 90 && tampered.length < 220, `${tampered.length}`);
    for (const record of records) {
      assert.equal(checkHash(record), record.tampered ? 'mismatch' : 'ok', `rawId ${record.rawId}`);
    }
    for (const record of tampered) {
      assert.equal(checkSignature(record), isEvmAddress(record.from) ? 'mismatch' : 'unknown');
    }
    assert.deepEqual(
      read().filter((r) => r.tampered),
      tampered,
    );
    sim.setFaults({ tamperedRate: 0 });
    const clean = read();
    assert.ok(clean.every((r) => r.tampered === undefined && checkHash(r) === 'ok'));
    // Only the amount differs, by one unit.
    const original = clean.find((r) => r.rawId === tampered[0]!.rawId)!;
    assert.equal(BigInt(tampered[0]!.amount), BigInt(original.amount) + 1n);
    assert.deepEqual(
      { ...tampered[0], amount: original.amount, tampered: undefined },
      {
        ...original,
        tampered: undefined,
      },
    );
  });
});
