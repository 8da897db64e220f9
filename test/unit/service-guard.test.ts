import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createServiceGuard, type ServiceCheck } from '../../src/app/mirrored-service.js';
import { lowestAnchor, servesAnchor } from '../../src/domain/service-anchor.js';
import { ServiceMismatchError } from '../../src/errors.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

describe('the service anchor', () => {
  it('is served when the same rawId comes back under its hash, whatever else changed', () => {
    const tx = makeLedgerTx({ rawId: 7, status: 'confirmed', id: '', timestamp: 0 });
    const anchor = { rawId: 7, ledgerHash: tx.ledgerHash.toUpperCase().replace('0X', '0x') };
    assert.equal(
      servesAnchor(anchor, { ...tx, status: 'packaged', id: 'batch-1', timestamp: 1_700_000_000_000 }),
      true,
    );
    assert.equal(servesAnchor(anchor, null), false, 'a 404');
    assert.equal(servesAnchor(anchor, { ...tx, rawId: 8 }), false, 'another record under that hash');
  });

  it('of a page is its lowest record', () => {
    const txs = [9, 4, 6].map((rawId) => makeLedgerTx({ rawId }));
    assert.equal(lowestAnchor(txs)?.rawId, 4);
    assert.equal(lowestAnchor([]), undefined);
  });
});

describe('the workers’ service guard', () => {
  function fakeService(results: Array<ServiceCheck | Error>) {
    let calls = 0;
    return {
      calls: () => calls,
      ensure: async () => {
        const next = results[Math.min(calls, results.length - 1)]!;
        calls += 1;
        if (next instanceof Error) throw next;
        return next;
      },
    };
  }
  const same: ServiceCheck = { state: 'same', anchor: { rawId: 1, ledgerHash: '0x01' } };

  it('trusts a verified service for a while, and shares one check between jobs', async () => {
    let now = 0;
    const service = fakeService([same]);
    const guard = createServiceGuard(service, { trustMs: 1000, now: () => now });
    await Promise.all([guard(), guard(), guard()]);
    assert.equal(service.calls(), 1);
    now = 999;
    await guard();
    assert.equal(service.calls(), 1);
    now = 1000;
    await guard();
    assert.equal(service.calls(), 2);
  });

  it('asks again while the mirror is empty, and refuses every job while the service is another', async () => {
    const refused = new ServiceMismatchError({
      anchor: { rawId: 1, ledgerHash: '0xabc' },
      serviceUrl: 'http://other/',
      way: 'adopt it',
    });
    const service = fakeService([{ state: 'empty' }, refused]);
    const guard = createServiceGuard(service, { trustMs: 60_000 });
    await guard();
    await assert.rejects(guard(), ServiceMismatchError);
    await assert.rejects(guard(), ServiceMismatchError);
    assert.equal(service.calls(), 3);
    assert.equal(refused.retryable, false);
  });
});
