import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { streamKey as storeKey, streamKey } from '../../src/domain/stream-key.js';

describe('streamKey', () => {
  const specs = [
    {},
    { action: 'burn' },
    { account: '0xAbC', tokenTag: 'ethereum-usdc-0x1', withoutAction: 'mint' },
    { account: 'eid/1 2', action: 'transfer', tokenTag: 't' },
  ];

  it('gives one key per list and filters, filters in a fixed order', () => {
    assert.equal(streamKey({}), 'txs');
    assert.equal(streamKey({ action: 'burn', tokenTag: 'x' }), streamKey({ tokenTag: 'x', action: 'burn' }));
    assert.notEqual(streamKey({ account: 'a' }), streamKey({ account: 'A' }));
  });

  it('keys an EVM address whatever its checksum case, other ids as they are', () => {
    const checksum = '0x52908400098527886E0F7030069857D2E4169EE7';
    assert.equal(streamKey({ account: checksum }), streamKey({ account: checksum.toLowerCase() }));
    assert.equal(streamKey({ account: checksum }), `txsByAccount/${checksum.toLowerCase()}`);
    // Arweave addresses are case-sensitive: two different accounts.
    const arweave = 'vLRHFqCw1uHu75xqB4fCDW-QxpkpJxBtFD9g4QYUbfw';
    assert.notEqual(streamKey({ account: arweave }), streamKey({ account: arweave.toLowerCase() }));
  });

  it('matches the key the store derives', () => {
    for (const spec of specs) assert.equal(streamKey(spec), storeKey(spec));
  });
});
