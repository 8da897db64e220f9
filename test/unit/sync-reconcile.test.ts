import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reconcilePending } from '../../src/sync/reconcile.js';
import { MemoryStore, makeTx } from './sync-fakes.js';

describe('reconcilePending', () => {
  it('re-reads due records, stores the settled ones and reports the missing', async () => {
    const store = new MemoryStore();
    for (const id of [1, 2, 3, 4]) {
      store.rows.set(id, makeTx(id));
      store.queueReread(id);
    }
    const result = await reconcilePending({
      store,
      fetchByHash: async (hash) => {
        const rawId = Number(hash.replace('0xhash', ''));
        if (rawId === 4) return null;
        return makeTx(rawId, { status: rawId === 3 ? 'confirmed' : 'packaged', id: 'batch-1' });
      },
    });
    assert.equal(result.checked, 4);
    assert.equal(result.missing, 1);
    assert.equal(store.rows.get(1)?.status, 'packaged');
    assert.equal(store.rows.get(1)?.id, 'batch-1');
    assert.equal(store.pending.length, 0, 'nothing is due any more');
  });

  it('leaves a record whose look-up fails due, without asking again in the same run', async () => {
    const store = new MemoryStore();
    store.rows.set(7, makeTx(7));
    store.queueReread(7, { attempts: 2 });
    let calls = 0;
    const result = await reconcilePending({
      store,
      fetchByHash: async () => {
        calls++;
        throw new Error('HTTP 503');
      },
    });
    assert.equal(calls, 1);
    assert.equal(result.failed, 1);
    assert.equal(store.pending.length, 1);
  });

  it('stops at maxRecords', async () => {
    const store = new MemoryStore();
    for (let id = 0; id < 30; id++) {
      store.rows.set(id, makeTx(id));
      store.queueReread(id);
    }
    const result = await reconcilePending({
      store,
      batchSize: 8,
      maxRecords: 10,
      fetchByHash: async (hash) => makeTx(Number(hash.slice(6)), { status: 'packaged' }),
    });
    assert.equal(result.checked, 10);
    assert.equal(store.pending.length, 20);
  });
});
