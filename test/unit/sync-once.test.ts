import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { streamSpecs, syncOnce } from '../../src/app/sync-once.js';
import type { TxListQuery } from '../../src/client/api-types.js';
import type { LedgerClient } from '../../src/client/ledger-client.js';
import type { LedgerToken } from '../../src/domain/model.js';
import { quietLogger } from '../../src/sync/sync-logger.js';
import { LiveList, MemoryStore, makeTx } from './sync-fakes.js';

function fakeClient(list: LiveList, calls: string[]): LedgerClient {
  const client = {
    info: async () => ({ tokenList: [{ tag: 'ethereum-usdt-0xdac' } as LedgerToken], raw: {} }),
    txs: async (query: TxListQuery = {}) => {
      calls.push(`txs:${query.page}`);
      return list.fetchPage({}, query.page ?? 1);
    },
    txsByAccount: async (account: string, query: TxListQuery = {}) => {
      calls.push(`account:${account}:${query.page}`);
      return list.fetchPage({ account }, query.page ?? 1);
    },
    txsByHash: async (hash: string) => makeTx(Number(hash.replace('0xhash', '')), { status: 'packaged' }),
    // A service of page numbers (the walk by key has tests of its own).
    listDialect: async () => 'page' as const,
    keyCount: () => 100,
    inFlight: () => 2,
  };
  return client as unknown as LedgerClient;
}

describe('streamSpecs', () => {
  it('gives the global list without accounts and one stream per distinct account otherwise', () => {
    assert.deepEqual(streamSpecs({ action: 'burn' }), [
      { tokenTag: undefined, action: 'burn', withoutAction: undefined },
    ]);
    assert.deepEqual(
      streamSpecs({ accounts: ['a', 'b', 'a'] }).map((s) => s.account),
      ['a', 'b'],
    );
  });
});

describe('syncOnce', () => {
  it('refreshes tokens, walks every stream, then re-reads the pending records', async () => {
    const list = new LiveList({ count: 25 });
    const store = new MemoryStore();
    // Not on the lists walked: re-read by its own look-up.
    store.rows.set(1000, makeTx(1000));
    store.queueReread(1000);
    const calls: string[] = [];
    const saved: LedgerToken[][] = [];
    const result = await syncOnce(
      {
        config: { concurrency: 2 },
        logger: quietLogger,
        client: fakeClient(list, calls),
        store,
        saveTokens: async (tokens) => saved.push(tokens),
      },
      { accounts: ['0xA', 'eid1'] },
    );
    assert.equal(saved.length, 1);
    assert.equal(result.tokens, 1);
    assert.deepEqual(
      result.streams.map((s) => s.key),
      ['txsByAccount/0xA', 'txsByAccount/eid1'],
    );
    assert.ok(calls.includes('account:0xA:3') && calls.includes('account:eid1:1'));
    assert.equal(result.reread?.checked, 1);
    assert.equal(result.reconcile, result.reread, 'under its former name too');
    assert.equal(store.rows.get(1000)?.status, 'packaged');
    assert.equal(result.stopped, false);
  });

  it('does nothing more once the signal has aborted', async () => {
    const list = new LiveList({ count: 25 });
    const store = new MemoryStore();
    store.rows.set(3, makeTx(3));
    store.queueReread(3);
    const controller = new AbortController();
    controller.abort(new Error('SIGTERM'));
    const calls: string[] = [];
    const result = await syncOnce(
      { config: { concurrency: 2 }, logger: quietLogger, client: fakeClient(list, calls), store },
      { signal: controller.signal },
    );
    assert.deepEqual(calls, []);
    assert.equal(result.reread, null);
    assert.equal(result.stopped, true);
  });
});

describe('syncOnce token refresh', () => {
  const run = async (listedAt: Date | null, refreshTokens?: boolean) => {
    const calls: string[] = [];
    const client = fakeClient(new LiveList({ count: 5 }), calls);
    let infos = 0;
    const counting = Object.assign(Object.create(client), {
      info: async () => {
        infos++;
        return client.info();
      },
    }) as typeof client;
    await syncOnce(
      {
        config: { concurrency: 2 },
        logger: quietLogger,
        client: counting,
        store: new MemoryStore(),
        saveTokens: async () => undefined,
        tokensListedAt: async () => listedAt,
      },
      { refreshTokens, reread: false },
    );
    return infos;
  };

  it('reads /info when the stored token list is missing or ten minutes old, not on every run', async () => {
    assert.equal(await run(null), 1);
    assert.equal(await run(new Date(Date.now() - 11 * 60_000)), 1);
    assert.equal(await run(new Date(Date.now() - 60_000)), 0);
    assert.equal(await run(new Date(), true), 1, 'unless asked to');
    assert.equal(await run(null, false), 0);
  });
});
