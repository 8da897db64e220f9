import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkHash,
  checkIntegrity,
  checkSignature,
  personalMessageDigest,
  recomputeLedgerHash,
  recoverSigner,
  signedMessage,
} from '../../src/domain/integrity.js';
import { testAccount } from '../helpers/evm-signer.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

/*
 * Records printed in the service's public documentation, verbatim except that the service's
 * `everHash` is this project's `ledgerHash`. Their hashes and signatures are real.
 */

/** A 2021 burn (test network), without a `version` field. */
const BURN_2021 = {
  id: 'Lwml1yitCpuIyJ6w-MgCPWRpDjE1-5dQF_hGw7OQcoY',
  tokenSymbol: 'ETH',
  action: 'burn',
  from: '0x295204c357963C07F7D696E61cB243A0CE92cC0c',
  to: '0xB245ceC3b31707e2ffe1C58148cEC6b6017255a3',
  amount: '979251798000000000',
  fee: '20000000000000000',
  feeRecipient: '0x6451eB7f668de69Fb4C943Db72bCF2A73DeeC6B1',
  nonce: 1625733233558,
  tokenID: '0x0000000000000000000000000000000000000000',
  chainType: 'ethereum',
  chainID: '42',
  data: '',
  sig: '0x53dd3941c422b514b59e55bbecd66143aea199fef582842dcfd7d0f64aad4cf21f0e95fcc2346a44bc027e1a0ef474960d51b5745a6e9685930a14920d2b1afa1b',
  ledgerHash: '0xaf5f8a2d95af57553eddc4d280ea5911d9152e346aaa8b772cb61db05ea05590',
  status: 'packaged',
  timestamp: 1625733624000,
  targetChainTxHash: '0xdbe3cf5194b289deb674cb88c6510ae85de0572fdeefd83d0cd1dbdaf8f9d94e',
};

/** A 2021 mint (test network), without a `version` field; signed by the service's account, its `from`. */
const MINT_2021 = {
  id: 'bTpNVdf65ZDdKhWZElS1yg0g9xV_F4y41t7q56NAJqU',
  tokenSymbol: 'ETH',
  action: 'mint',
  from: '0xa6C17933505F5e19531C3a647C4DfAa34B1233a7',
  to: '0x26361130d5d6E798E9319114643AF8c868412859',
  amount: '10000000000000',
  fee: '0',
  feeRecipient: '0x6451eB7f668de69Fb4C943Db72bCF2A73DeeC6B1',
  nonce: 1625652570825,
  tokenID: '0x0000000000000000000000000000000000000000',
  chainType: 'ethereum',
  chainID: '42',
  data: '{"hash": "0xb108424a3f6cc044ee3bf4b27bc9a56fa67ae58c4734711b3ced775639bf0d2b", "nonce": "0xc6", "blockHash": "0x2a9c4090b8110e602d7b346d07d34d2f7445d0b20c76fda12f1757f98189f354", "blockNumber": "0x18c3854", "transactionIndex": "0x1", "from": "0x26361130d5d6E798E9319114643AF8c868412859", "to": "0xa7ae99C13d82dd32fc6445Ec09e38d197335F38a", "value": "0x9184e72a000", "gas": "0x587a", "gasPrice": "0x1bf08eb00", "input": "0x", "r": "0xea4722b335b447a8d01c06fb6be4840494dea3869979a92b0ba5a4f4e4d5d6cc", "s": "0x23ce4a06c1185625244415de593f15fa4e97c32c5379ead26d788e864b917da4", "v": "0x77"}',
  sig: '0x9d7336dbcb1b06fcd0eed3fc60b1dffc5391cd27888def366b1aeaeaedf91ae663f8dfb9c1b53395572b7a668491eb91edfe2e1f49a5d9ffa592027a06e3a4ee1c',
  ledgerHash: '0x999fb4266c33b87fe706d5f964692f3db8e755d08280da43f076c229e0a821f8',
  status: 'packaged',
  timestamp: 1625653293000,
  targetChainTxHash: '0xb108424a3f6cc044ee3bf4b27bc9a56fa67ae58c4734711b3ced775639bf0d2b',
};

/** A 2023 transfer (main network) with `version` `v1`, to an Arweave account. */
const TRANSFER_2023 = {
  rawId: 607851,
  id: 'kiSRJt4wGKKNiCryVVI7Cl49v_1R5y6q856gUdRqIZo',
  tokenSymbol: 'ETH',
  action: 'transfer',
  from: '0x407634d12588a02e6c2FfcDeD96939634B6e100c',
  to: 'uDA8ZblC-lyEFfsYXKewpwaX-kkNDDw8az3IW9bDL68',
  amount: '924145481608',
  fee: '0',
  feeRecipient: '0x6451eB7f668de69Fb4C943Db72bCF2A73DeeC6B1',
  nonce: 1680593181148,
  tokenID: '0x0000000000000000000000000000000000000000',
  chainType: 'ethereum',
  chainID: '1',
  data: '{"appName":"arseeding","action":"payment","itemIds":["7xx78FLBSDLCuJw2BcK6t6qxxAUPdEUTXHIUiRdF-kM"]}',
  version: 'v1',
  sig: '0x5410910a56055546fca432b539f7dc0e4cd6a4555147f754629c1c2b5841c0dc3287b70c5fd1b06990e9b8f2e9d0994a90128f8383360e153f5843eecd6f02511b',
  ledgerHash: '0xd08c893c7c6f6534a928cfb1c1ab958fd3d9866212c626185cceffc9614581ff',
  status: 'packaged',
  internalStatus: '{"status":"success"}',
  timestamp: 1680593586000,
  targetChainTxHash: '',
  express: { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' },
};

const PUBLISHED = { BURN_2021, MINT_2021, TRANSFER_2023 };

/** A fresh key, its address, and a signer of a record's message in the wire's r‖s‖v form. */
describe('integrity of records the service published', () => {
  for (const [name, record] of Object.entries(PUBLISHED)) {
    it(`${name}: the recomputed ledgerHash matches and the signature recovers to from`, () => {
      assert.equal(recomputeLedgerHash(record), record.ledgerHash);
      assert.equal(checkHash(record), 'ok');
      assert.equal(checkSignature(record), 'ok');
      assert.deepEqual(checkIntegrity(record), { hash: 'ok', signature: 'ok' });
    });
  }

  it('signs records without a version as version v1', () => {
    const message = signedMessage(BURN_2021)!;
    assert.ok(message.endsWith('\ndata:\nversion:v1'), message);
    assert.equal(message.split('\n').length, 13);
    assert.equal(message.split('\n')[7], 'nonce:1625733233558');
    // An empty version, as the record parser gives for an absent one, reads the same.
    assert.equal(checkHash({ ...MINT_2021, version: '' }), 'ok');
    assert.equal(checkHash({ ...TRANSFER_2023, version: 'v2' }), 'mismatch');
  });

  it('flags a published record with one field changed, in hash and signature', () => {
    const tampered = { ...TRANSFER_2023, amount: '924145481609' };
    assert.deepEqual(checkIntegrity(tampered), { hash: 'mismatch', signature: 'mismatch' });
    const otherSigner = { ...TRANSFER_2023, from: '0x6451eB7f668de69Fb4C943Db72bCF2A73DeeC6B1' };
    assert.equal(checkSignature(otherSigner), 'mismatch');
  });

  it('compares hex and addresses in any case', () => {
    const upper = { ...BURN_2021, ledgerHash: BURN_2021.ledgerHash.toUpperCase().replace('0X', '0x') };
    assert.equal(checkHash(upper), 'ok');
  });
});

describe('integrity of records signed in the test', () => {
  it('accepts a record signed by its sender, with v as 27/28 or 0/1', () => {
    const account = testAccount();
    const tx = makeLedgerTx({ from: account.address.toUpperCase().replace('0X', '0x') });
    const message = signedMessage(tx)!;
    const signed = { ...tx, sig: account.sign(message), ledgerHash: recomputeLedgerHash(tx)! };
    assert.deepEqual(checkIntegrity(signed), { hash: 'ok', signature: 'ok' });
    assert.equal(checkSignature({ ...signed, sig: account.sign(message, 0) }), 'ok');
    assert.equal(checkSignature({ ...signed, sig: account.sign(message).slice(2) }), 'ok');
  });

  it('flags a field changed after signing', () => {
    const account = testAccount();
    const tx = makeLedgerTx({ from: account.address });
    const signed = { ...tx, sig: account.sign(signedMessage(tx)!), ledgerHash: recomputeLedgerHash(tx)! };
    for (const change of [{ amount: '1001' }, { to: 'eid-someone-else' }, { nonce: '1700000000001' }]) {
      assert.deepEqual(checkIntegrity({ ...signed, ...change }), { hash: 'mismatch', signature: 'mismatch' });
    }
    // Hash and signature replaced together by someone without the sender's key.
    const forger = testAccount();
    const forged = { ...signed, amount: '1001' };
    const forgedMessage = signedMessage(forged)!;
    const reSigned = { ...forged, sig: forger.sign(forgedMessage), ledgerHash: recomputeLedgerHash(forged)! };
    assert.deepEqual(checkIntegrity(reSigned), { hash: 'ok', signature: 'mismatch' });
  });

  it('flags signatures that are no signature', () => {
    const account = testAccount();
    const tx = makeLedgerTx({ from: account.address });
    const sig = account.sign(signedMessage(tx)!);
    for (const bad of ['', '0xsig', `${sig.slice(0, -2)}1d`, `0x${'00'.repeat(65)}`, `${sig}00`]) {
      assert.equal(checkSignature({ ...tx, sig: bad }), 'mismatch', bad);
    }
    assert.equal(recoverSigner(personalMessageDigest('x'), `0x${'ff'.repeat(64)}1b`), undefined);
  });

  it('leaves signatures of other account kinds unknown', () => {
    const arweave = makeLedgerTx({
      from: 'uDA8ZblC-lyEFfsYXKewpwaX-kkNDDw8az3IW9bDL68',
      sig: 'c2lnbmF0dXJl,b3duZXI',
    });
    const tx = { ...arweave, ledgerHash: recomputeLedgerHash(arweave)! };
    assert.deepEqual(checkIntegrity(tx), { hash: 'ok', signature: 'unknown' });
    assert.equal(
      checkSignature(makeLedgerTx({ from: 'eid0123456789abcdef0123456789abcdef01234567' })),
      'unknown',
    );
    assert.equal(checkSignature(makeLedgerTx({ from: '0x1234' })), 'unknown');
  });

  it('is unknown where a field is missing', () => {
    const { fee: _fee, ...withoutFee } = TRANSFER_2023;
    assert.equal(signedMessage(withoutFee), undefined);
    assert.equal(recomputeLedgerHash(withoutFee), undefined);
    assert.equal(checkHash(withoutFee), 'unknown');
    assert.equal(checkSignature(withoutFee), 'unknown');
    assert.deepEqual(checkIntegrity({ ...TRANSFER_2023, data: null }), {
      hash: 'unknown',
      signature: 'unknown',
    });
    const { ledgerHash: _hash, ...withoutHash } = TRANSFER_2023;
    assert.equal(checkHash(withoutHash), 'unknown');
    const { sig: _sig, ...withoutSig } = TRANSFER_2023;
    assert.deepEqual(checkIntegrity(withoutSig), { hash: 'ok', signature: 'unknown' });
  });

  it('skips signature recovery when asked', () => {
    assert.deepEqual(checkIntegrity(TRANSFER_2023, { signatures: false }), {
      hash: 'ok',
      signature: 'unknown',
    });
  });
});
