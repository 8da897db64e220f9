import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FetchKeyPage } from '../../src/sync/ports/fetches.js';
import type { ClaimedRecord } from '../../src/sync/ports/sync-store.js';
import { planKeyRereads, readKeyRereads } from '../../src/sync/reread/reread-by-key.js';
import { makeTx } from './sync-fakes.js';

/** A due record of a list holding rawIds 1..head, all stored: its rank is head - rawId. */
const due = (rawId: number, head = 1000): ClaimedRecord => ({
  rawId,
  ledgerHash: `0x${rawId}`,
  attempts: 0,
  listRank: head - rawId < 500 ? head - rawId : null,
  burnRank: null,
});

describe('re-reads by key, planned', () => {
  it('covers records close together with one answer each hundred, and looks up stragglers', () => {
    const plan = planKeyRereads(
      [990, 960, 955, 900, 899, 898, 700, 20].map((id) => due(id)),
      { count: 100 },
    );
    assert.deepEqual(
      plan.reads.map((r) => ({ cursor: r.cursor, covers: r.covers.map((c) => c.rawId) })),
      [{ cursor: 897, covers: [898, 899, 900, 955, 960, 990] }],
    );
    assert.deepEqual(
      plan.lookups.map((r) => r.rawId).sort((a, b) => a - b),
      [20, 700],
      'a lone record and one deeper than the ranks go one by one',
    );
  });

  it('reads two records close together with one answer, not two look-ups', () => {
    const plan = planKeyRereads([due(905), due(880), due(600)], { count: 100 });
    assert.deepEqual(
      plan.reads.map((r) => ({ cursor: r.cursor, covers: r.covers.map((c) => c.rawId) })),
      [{ cursor: 879, covers: [880, 905] }],
    );
    assert.deepEqual(
      plan.lookups.map((r) => r.rawId),
      [600],
    );
  });

  it('splits records more than a count apart into answers of their own', () => {
    const ids = [
      ...Array.from({ length: 5 }, (_, i) => 500 + i),
      ...Array.from({ length: 5 }, (_, i) => 800 + i),
    ];
    const plan = planKeyRereads(
      ids.map((id) => due(id, 900)),
      { count: 100 },
    );
    assert.deepEqual(
      plan.reads.map((r) => r.cursor),
      [499, 799],
    );
    assert.equal(plan.lookups.length, 0);
  });
});

describe('re-reads by key of burns', () => {
  /** A due burn: every seventh record of the list is a burn. */
  const burn = (rawId: number, head = 1000): ClaimedRecord => ({
    ...due(rawId, head),
    burnRank: Math.floor((head - rawId) / 7),
  });

  it('reads them through the burn list, where they lie close together, even one alone', () => {
    const plan = planKeyRereads([burn(300), burn(510), burn(650), burn(980), due(990), due(985), due(960)], {
      count: 100,
    });
    assert.deepEqual(
      plan.reads.map((r) => ({ list: r.list, cursor: r.cursor, covers: r.covers.map((c) => c.rawId) })),
      [
        { list: 'global', cursor: 959, covers: [960, 985, 990] },
        { list: 'burns', cursor: 299, covers: [300, 510, 650, 980] },
      ],
    );
    assert.deepEqual(plan.lookups, []);
    const alone = planKeyRereads([burn(400)], { count: 100 });
    assert.deepEqual(
      alone.reads.map((r) => [r.list, r.cursor]),
      [['burns', 399]],
    );
  });

  it('asks the burn list for them', async () => {
    const asked: Array<{ action: string | undefined; cursor: number }> = [];
    const fetchKeyPage: FetchKeyPage = async (spec, { cursor }) => {
      asked.push({ action: spec.action, cursor });
      return { txs: [makeTx(510, { action: 'burn' })], rejected: [], hasNextPage: false };
    };
    const plan = planKeyRereads([burn(510)], { count: 100 });
    const read = await readKeyRereads({
      reads: plan.reads,
      fetchKeyPage,
      count: 100,
      limit: 1,
      onFailure: () => {},
    });
    assert.deepEqual(asked, [{ action: 'burn', cursor: 509 }]);
    assert.deepEqual([...read.found.keys()], [510]);
  });
});

describe('re-reads by key, read', () => {
  it('returns what the answers showed, and the due records they should have carried but did not', async () => {
    const listed = [898, 899, 955, 960, 990].map((id) => makeTx(id, { status: 'packaged' }));
    const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count }) => {
      const txs = listed.filter((tx) => tx.rawId > cursor).slice(0, count ?? 10);
      return { txs, rejected: [], hasNextPage: false };
    };
    const plan = planKeyRereads(
      [990, 960, 955, 900, 899, 898].map((id) => due(id)),
      { count: 100 },
    );
    const read = await readKeyRereads({
      reads: plan.reads,
      fetchKeyPage,
      count: 100,
      limit: 2,
      onFailure: () => {},
    });
    assert.deepEqual([...read.found.keys()].sort(), [898, 899, 955, 960, 990]);
    assert.deepEqual(
      read.unseen.map((r) => r.rawId),
      [900],
      'not listed: looked up',
    );
    assert.equal(read.requests, 1);
  });
});
