import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  accountPathCandidates,
  DEFAULT_PATHS,
  fillPath,
  queryString,
  resolvePaths,
} from '../../src/client/api-paths.js';
import { clientOptionsFromConfig } from '../../src/client/options.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

describe('endpoint paths', () => {
  it("default to the service's own spelling", () => {
    const paths = resolvePaths(undefined);
    assert.equal(paths.txsByAccount, '/txsByAccount/{account}');
    assert.equal(paths.txsByHash, '/txsByHash/{ledgerHash}');
    assert.equal(paths.mintedTxByChainTxHash, '/mintedTxByChainTxHash/{chainTxHash}');
    assert.equal(paths.submitTx, '/tx');
    assert.equal(paths.verifyMessage, '/verifyMessage');
  });

  it('take overrides such as the /tx/{hash} and /minted/{chainTxHash} deployment', () => {
    const paths = resolvePaths({
      txsByHash: '/tx/{ledgerHash}',
      mintedTxByChainTxHash: '/minted/{chainTxHash}',
    });
    assert.equal(paths.txsByHash, '/tx/{ledgerHash}');
    assert.equal(paths.mintedTxByChainTxHash, '/minted/{chainTxHash}');
    assert.equal(paths.info, DEFAULT_PATHS.info);
  });

  it('spell the look-ups as deployments do when asked, overrides still applied over them', () => {
    const deployed = resolvePaths(undefined, 'paths', 'deployed');
    assert.equal(deployed.txsByHash, '/tx/{ledgerHash}');
    assert.equal(deployed.mintedTxByChainTxHash, '/minted/{chainTxHash}');
    assert.equal(deployed.txsByAccount, DEFAULT_PATHS.txsByAccount);
    const overridden = resolvePaths({ mintedTxByChainTxHash: '/m/{chainTxHash}' }, 'paths', 'deployed');
    assert.deepEqual(
      [overridden.txsByHash, overridden.mintedTxByChainTxHash],
      ['/tx/{ledgerHash}', '/m/{chainTxHash}'],
    );
    assert.deepEqual([DEFAULT_PATHS.txsByKey, DEFAULT_PATHS.txsByKeyAccount], ['/txs', '/txs/{account}']);
  });

  it('refuse an unknown endpoint, a relative path or the wrong parameters, naming the setting', () => {
    const bad: Array<Record<string, string>> = [
      { txByHash: '/tx/{ledgerHash}' },
      { txsByHash: 'tx/{ledgerHash}' },
      { txsByHash: '/tx/{hash}' },
      { balance: '/balance/{account}' },
      { info: '/info/{account}' },
      { txs: '/txs?page=1' },
    ];
    for (const overrides of bad) {
      assert.throws(
        () => resolvePaths(overrides, 'LEDGER_PATHS'),
        (error: unknown) => error instanceof ConfigError && error.setting === 'LEDGER_PATHS',
        JSON.stringify(overrides),
      );
    }
  });

  it('come from LEDGER_PATHS through the configuration', () => {
    const config = loadConfig({
      LEDGER_BASE_URL: 'http://127.0.0.1:1',
      LEDGER_PATHS: '{"txsByAccount":"/txs/{account}"}',
    });
    const options = clientOptionsFromConfig(config);
    assert.equal((options.paths as Record<string, string>)['txsByAccount'], '/txs/{account}');
    assert.throws(
      () =>
        clientOptionsFromConfig(loadConfig({ LEDGER_BASE_URL: 'http://x', LEDGER_PATHS: '{"nope":"/n"}' })),
      (error: unknown) => error instanceof ConfigError && error.setting === 'LEDGER_PATHS',
    );
  });

  it('need LEDGER_BASE_URL to build client options', () => {
    assert.throws(
      () => clientOptionsFromConfig(loadConfig({})),
      (error: unknown) => error instanceof ConfigError && error.setting === 'LEDGER_BASE_URL',
    );
  });

  it('try the configured account shape first, then the other', () => {
    assert.deepEqual(accountPathCandidates('/txsByAccount/{account}'), [
      '/txsByAccount/{account}',
      '/txs/{account}',
    ]);
    assert.deepEqual(accountPathCandidates('/txs/{account}'), ['/txs/{account}', '/txsByAccount/{account}']);
    assert.deepEqual(accountPathCandidates('/v2/acc/{account}'), [
      '/v2/acc/{account}',
      '/txsByAccount/{account}',
      '/txs/{account}',
    ]);
  });
});

describe('URL building', () => {
  it('encodes each path parameter as one segment', () => {
    assert.equal(fillPath('/txsByAccount/{account}', { account: 'eid-a_b,c' }), '/txsByAccount/eid-a_b%2Cc');
    assert.equal(
      fillPath('/balance/{tag}/{account}', { tag: 'ethereum-eth-0x0', account: 'a/b?c#d e' }),
      '/balance/ethereum-eth-0x0/a%2Fb%3Fc%23d%20e',
    );
  });

  it('refuses an empty parameter rather than calling the wrong endpoint', () => {
    assert.throws(() => fillPath('/balances/{account}', { account: '' }), TypeError);
    assert.throws(() => fillPath('/balances/{account}', {}), TypeError);
  });

  it('encodes query values and leaves out undefined ones', () => {
    assert.equal(queryString({}), '');
    assert.equal(
      queryString({ page: 2, tokenTag: undefined, action: 'transfer' }),
      '?page=2&action=transfer',
    );
    assert.equal(
      queryString({ tokenTag: 'arweave,ethereum-ar-AR,0x4f&x=1 +' }),
      '?tokenTag=arweave%2Cethereum-ar-AR%2C0x4f%26x%3D1%20%2B',
    );
    assert.throws(() => queryString({ page: 1.5 }), TypeError);
  });
});
