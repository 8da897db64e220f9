import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rereadPending } from '../../src/sync/reread/reread-pending.js';
import { MemoryStore, makeTx } from './sync-fakes.js';

describe('rereadPending', () => {
  it('re-reads due records, stores the settled ones and reports the missing', async () => {
    const store = new MemoryStore();
    for (const id of [1, 2, 3, 4]) {
      store.rows.set(id, makeTx(id));
      store.queueReread(id);
    }
    const result = await rereadPending({
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
    assert.ok(store.rows.has(4), 'a record the service no longer knows stays stored');
    assert.ok(store.rechecks.has(4), 'and is read again later');
  });

  it('re-reads records near the head through list pages, and the rest one by one', async () => {
    const store = new MemoryStore();
    for (let id = 1; id <= 50; id++) store.rows.set(id, makeTx(id));
    for (const id of [50, 49, 47, 44, 41, 5]) store.queueReread(id);
    const pages: string[] = [];
    const lookups: string[] = [];
    const result = await rereadPending({
      store,
      lists: {},
      fetchPage: async (spec, page) => {
        pages.push(`${JSON.stringify(spec)}:${page}`);
        const ids = Array.from({ length: 10 }, (_, i) => 50 - (page - 1) * 10 - i).filter((id) => id > 0);
        return {
          txs: ids.map((id) => makeTx(id, { status: 'packaged', id: 'b' })),
          currentPage: page,
          totalPages: 5,
          rejected: [],
        };
      },
      fetchByHash: async (hash) => {
        lookups.push(hash);
        return makeTx(Number(hash.slice(6)), { status: 'packaged', id: 'b' });
      },
    });
    assert.deepEqual(pages, ['{}:1']);
    assert.deepEqual(lookups, ['0xhash5']);
    assert.deepEqual([result.checked, result.viaPages, result.requests], [6, 5, 2]);
    for (const id of [50, 49, 47, 44, 41, 5]) assert.equal(store.rows.get(id)?.status, 'packaged');
    assert.equal(store.rows.get(48)?.status, 'confirmed', 'records not due are left as they are');
    assert.equal(store.rechecks.size, 0);
  });

  it('counts a queued record not yet due that a list page showed as read too', async () => {
    const store = new MemoryStore();
    for (let id = 1; id <= 30; id++) store.rows.set(id, makeTx(id));
    store.queueReread(30);
    store.queueReread(29);
    store.queueReread(25, { dueAt: new Date(Date.now() + 60_000) });
    await rereadPending({
      store,
      lists: {},
      fetchPage: async (_spec, page) => ({
        txs: Array.from({ length: 10 }, (_, i) =>
          makeTx(30 - i, i === 5 ? {} : { status: 'packaged', id: 'b' }),
        ),
        currentPage: page,
        totalPages: 3,
        rejected: [],
      }),
      fetchByHash: async () => null,
    });
    assert.equal(store.rows.get(30)?.status, 'packaged');
    const next = store.rechecks.get(25);
    assert.ok(next && next.attempts === 1, 'read along with the due one, still not final');
    assert.ok(next.dueAt < Date.now() + 60_000, 'and due with the next run that reads its page');
    assert.equal(store.rows.get(28)?.status, 'confirmed', 'records not queued are left to the walks');
  });

  it('looks up a record a list page did not show, since the list moved', async () => {
    const store = new MemoryStore();
    for (let id = 1; id <= 20; id++) store.rows.set(id, makeTx(id));
    store.queueReread(12);
    const lookups: string[] = [];
    await rereadPending({
      store,
      lists: {},
      // Two records arrived: page 1 now ends above rawId 12.
      fetchPage: async () => ({
        txs: Array.from({ length: 10 }, (_, i) => makeTx(22 - i)),
        currentPage: 1,
        totalPages: 3,
        rejected: [],
      }),
      fetchByHash: async (hash) => {
        lookups.push(hash);
        return makeTx(12, { status: 'packaged', id: 'b' });
      },
    });
    assert.deepEqual(lookups, ['0xhash12']);
    assert.equal(store.rows.get(12)?.status, 'packaged');
  });

  it('follows the list as it moves: pages placed by the shift the first page showed, no look-ups', async () => {
    const store = new MemoryStore();
    for (let id = 1; id <= 200; id++) store.rows.set(id, makeTx(id));
    // Twenty due records at ranks 60..79 (pages 7 and 8 when the ranks were counted).
    for (let id = 140; id >= 121; id--) store.queueReread(id);
    const pages: number[] = [];
    const lookups: string[] = [];
    const result = await rereadPending({
      store,
      lists: { globalPagesRead: 2 },
      // Two records arrived since: every record sits two places lower.
      fetchPage: async (_spec, page) => {
        pages.push(page);
        const ids = Array.from({ length: 10 }, (_, i) => 202 - (page - 1) * 10 - i);
        return {
          txs: ids.map((id) => makeTx(id, { status: 'packaged', id: 'b' })),
          currentPage: page,
          totalPages: 21,
          rejected: [],
        };
      },
      fetchByHash: async (hash) => {
        lookups.push(hash);
        return null;
      },
    });
    assert.deepEqual(pages, [7, 8, 9], 'page 7 first, then the two pages the records moved onto');
    assert.deepEqual(lookups, []);
    assert.deepEqual([result.checked, result.viaPages, result.requests], [20, 20, 3]);
  });

  it('re-reads only what was due when the run began, not what fell due during it', async () => {
    const store = new MemoryStore();
    const began = new Date(Date.now() - 1_000);
    for (const id of [1, 2]) store.rows.set(id, makeTx(id));
    store.queueReread(1, { dueAt: new Date(began.getTime() - 500) });
    // Read by this run's own walk half a second after it began: due by now, not by its start.
    store.queueReread(2, { dueAt: new Date(began.getTime() + 500) });
    const looked: string[] = [];
    const result = await rereadPending({
      store,
      dueBy: began,
      fetchByHash: async (hash) => {
        looked.push(hash);
        return makeTx(Number(hash.slice(6)), { status: 'packaged', id: 'b' });
      },
    });
    assert.deepEqual(looked, ['0xhash1']);
    assert.equal(result.checked, 1);
    assert.ok(store.rechecks.has(2), 'left for the next run');
  });

  it('leaves a record whose look-up fails for a later run, without asking again in the same run', async () => {
    const store = new MemoryStore();
    store.rows.set(7, makeTx(7));
    store.queueReread(7, { attempts: 2 });
    let calls = 0;
    const result = await rereadPending({
      store,
      fetchByHash: async () => {
        calls++;
        throw new Error('HTTP 503');
      },
    });
    assert.equal(calls, 1);
    assert.equal(result.failed, 1);
    assert.equal(store.dueAt(new Date()).length, 0, 'claimed by this run');
    assert.equal(store.dueAt(new Date(Date.now() + 16_000)).length, 1, 'due again once the claim lapses');
  });

  it('stops at maxRecords', async () => {
    const store = new MemoryStore();
    for (let id = 0; id < 30; id++) {
      store.rows.set(id, makeTx(id));
      store.queueReread(id);
    }
    const result = await rereadPending({
      store,
      batchSize: 8,
      maxRecords: 10,
      fetchByHash: async (hash) => makeTx(Number(hash.slice(6)), { status: 'packaged' }),
    });
    assert.equal(result.checked, 10);
    assert.equal(store.pending.length, 20);
  });
});
