import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countList, type ListCountPorts } from '../../src/verify/list-count.js';
import type { CountedPage } from '../../src/verify/list-position.js';
import { withSeed } from '../helpers/seed.js';

const range = (lo: number, hi: number): number[] => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

/**
 * A live newest-first list over `ids` (ascending) and a table holding `stored`. `arrive(call)`
 * returns the rawIds that arrive at the head just before the `call`-th page read (1-based).
 */
function fakeList(input: {
  ids: number[];
  stored: Iterable<number>;
  arrive?: (call: number) => number[];
  /** RawIds the service serves without a readable rawId. */
  unreadable?: ReadonlySet<number>;
}): ListCountPorts & { ids: number[]; reads: number[] } {
  const ids = [...input.ids];
  const stored = new Set(input.stored);
  const reads: number[] = [];
  return {
    ids,
    reads,
    async fetchPage(page): Promise<CountedPage> {
      reads.push(page);
      for (const id of input.arrive?.(reads.length) ?? []) ids.push(id);
      const newestFirst = ids
        .slice()
        .reverse()
        .slice((page - 1) * 10, page * 10);
      return {
        slots: newestFirst.map((id) => (input.unreadable?.has(id) ? null : id)),
        totalPages: Math.ceil(ids.length / 10),
      };
    },
    async countStored({ above, atOrBelow }) {
      return [...stored].filter((id) => id <= atOrBelow && (above === null || id > above)).length;
    },
    async unstored(rawIds) {
      return rawIds.filter((id) => !stored.has(id)).sort((a, b) => a - b);
    },
  };
}

const without = (ids: number[], ...gone: number[]) => ids.filter((id) => !gone.includes(id));

describe('countList: a list counted against the table', () => {
  it('a complete mirror of a dense list: equal counts from three requests', async () => {
    const ids = range(1, 1000);
    const count = await countList(fakeList({ ids, stored: ids }), { upTo: 1000 });
    assert.equal(count.top, 1000);
    assert.equal(count.listed, 1000);
    assert.equal(count.stored, 1000);
    assert.equal(count.above, 0);
    assert.deepEqual(count.missing, { count: 0, rawIds: [] });
    assert.equal(count.extra, 0);
    assert.equal(count.unsettled, null);
    assert.ok(count.requests <= 3, `${count.requests} requests`);
  });

  it('names one record missing in the middle of a long list in O(log pages) requests', async () => {
    const ids = range(1, 100_000);
    const count = await countList(fakeList({ ids, stored: without(ids, 43_210) }), { upTo: 100_000 });
    assert.equal(count.listed, 100_000);
    assert.equal(count.stored, 99_999);
    assert.deepEqual(count.missing, { count: 1, rawIds: [43_210] });
    // 10,000 pages: about log2(10,000) = 14 halvings, two reads each, then a leaf of a few pages.
    assert.ok(count.requests <= 40, `${count.requests} requests`);
  });

  it('holes in the rawIds are not missing records; a missing record among them is named', async () => {
    await withSeed(async (rng) => {
      const ids = range(1, 5000).filter(() => !rng.chance(0.2));
      const victim = ids[rng.int(0, ids.length - 1)]!;
      const clean = await countList(fakeList({ ids, stored: ids }), { upTo: ids.at(-1)! });
      assert.deepEqual(clean.missing, { count: 0, rawIds: [] });
      assert.equal(clean.listed, ids.length);
      const count = await countList(fakeList({ ids, stored: without(ids, victim) }), { upTo: ids.at(-1)! });
      assert.deepEqual(count.missing, { count: 1, rawIds: [victim] });
    });
  });

  it('finds records missing on the first and on the last page, the top itself included', async () => {
    const ids = range(1, 3000).filter((id) => id % 7 !== 0);
    const top = ids.at(-1)!;
    for (const gone of [[top], [top, ids.at(-2)!], [ids[0]!], [ids[0]!, ids[5]!, top]]) {
      const count = await countList(fakeList({ ids, stored: without(ids, ...gone) }), { upTo: top });
      assert.deepEqual(
        count.missing,
        { count: gone.length, rawIds: [...gone].sort((a, b) => a - b) },
        `${gone}`,
      );
    }
  });

  it('names several missing records spread over the list', async () => {
    await withSeed(async (rng) => {
      const ids = range(1, 20_000);
      const gone = [...new Set(Array.from({ length: 8 }, () => rng.int(1, 20_000)))].sort((a, b) => a - b);
      const count = await countList(fakeList({ ids, stored: without(ids, ...gone) }), { upTo: 20_000 });
      assert.deepEqual(count.missing, { count: gone.length, rawIds: gone });
      assert.equal(count.unsettled, null);
    });
  });

  it('counts beyond the names it gives', async () => {
    const ids = range(1, 5000);
    const gone = range(1, 30).map((i) => i * 150);
    const count = await countList(fakeList({ ids, stored: without(ids, ...gone) }), {
      upTo: 5000,
      nameAtMost: 5,
    });
    assert.equal(count.missing.count, 30);
    assert.equal(count.missing.rawIds.length, 5);
    for (const id of count.missing.rawIds) assert.ok(gone.includes(id));
  });

  it('stays exact while records arrive at the head during the count', async () => {
    await withSeed(async (rng) => {
      const ids = range(1, 4000).filter(() => !rng.chance(0.1));
      let next = 5000;
      const victim = ids[rng.int(0, ids.length - 1)]!;
      // One to four records arrive before every third read: most pairs of reads see some arrive.
      const arrive = (call: number) => (call % 3 === 0 ? range(1, rng.int(1, 4)).map(() => next++) : []);
      const list = fakeList({ ids, stored: without(ids, victim), arrive });
      const count = await countList(list, { upTo: ids.at(-1)! });
      assert.equal(count.unsettled, null);
      assert.equal(count.listed, ids.length);
      assert.deepEqual(count.missing, { count: 1, rawIds: [victim] });
      assert.ok(list.ids.length > ids.length + 10, 'records arrived meanwhile');
      assert.ok((count.above ?? 0) > 0, 'the records above the watermark are counted');
    });
  });

  it('says so when records arrive between every two reads, and names nothing it could not pin down', async () => {
    const ids = range(1, 3000);
    let next = 5000;
    const list = fakeList({ ids, stored: without(ids, 100), arrive: () => [next++] });
    const count = await countList(list, { upTo: 3000 });
    assert.match(count.unsettled ?? '', /records kept arriving/);
    assert.equal(count.listed, null);
    assert.deepEqual(count.missing.rawIds, []);
  });

  it('counts up to a watermark below the head, the list above it not synced yet', async () => {
    const ids = range(1, 3000);
    const stored = without(range(1, 2000), 1500);
    const count = await countList(fakeList({ ids, stored }), { upTo: 2000 });
    assert.equal(count.top, 2000);
    assert.equal(count.listed, 2000);
    assert.equal(count.above, 1000);
    assert.deepEqual(count.missing, { count: 1, rawIds: [1500] });
  });

  it('a watermark the list does not hold: the newest record below it is the top, also at a page start', async () => {
    // Newest first: 3000..2971 on pages 1-3, then 2950 starts page 4.
    const ids = [...range(1, 2950), ...range(2971, 3000)];
    const count = await countList(fakeList({ ids, stored: range(1, 2950) }), { upTo: 2960 });
    assert.equal(count.top, 2950);
    assert.equal(count.listed, 2950);
    assert.equal(count.above, 30);
    assert.deepEqual(count.missing, { count: 0, rawIds: [] });
  });

  it('reports what the table holds that the list does not show', async () => {
    const ids = range(1, 2000);
    const count = await countList(fakeList({ ids: without(ids, 777), stored: ids }), { upTo: 2000 });
    assert.equal(count.extra, 1);
    assert.deepEqual(count.missing, { count: 0, rawIds: [] });
  });

  it('an empty list, and a list with nothing at or below the watermark', async () => {
    const empty = await countList(fakeList({ ids: [], stored: [] }), { upTo: 10 });
    assert.equal(empty.listed, 0);
    assert.equal(empty.top, null);
    const newer = await countList(fakeList({ ids: range(100, 150), stored: [] }), { upTo: 10 });
    assert.equal(newer.listed, 0);
    assert.deepEqual(newer.missing, { count: 0, rawIds: [] });
  });

  it('records served without a readable rawId are counted apart, not named missing', async () => {
    const ids = range(1, 2000);
    const unreadable = new Set([1234]);
    const count = await countList(fakeList({ ids, stored: without(ids, 1234, 456), unreadable }), {
      upTo: 2000,
    });
    assert.equal(count.withoutRawId, 1);
    assert.deepEqual(count.missing.rawIds, [456]);
  });

  it('many records without a readable rawId spread over a long list: counted exactly, none called missing', async () => {
    await withSeed(async (rng) => {
      const ids = range(1, 6000).filter(() => !rng.chance(0.05));
      // The count reaches up to a readable record, as `verify` counts up to the watermark (a
      // stored rawId): an unreadable record at the top could as well be one of the arrivals above.
      const unreadable = new Set(ids.slice(0, -1).filter(() => rng.chance(0.03)));
      const stored = ids.filter((id) => !unreadable.has(id));
      const list = fakeList({
        ids,
        stored,
        unreadable,
        // Records arrive at the head now and then while the list is counted.
        arrive: (call) => (call % 7 === 0 ? [list.ids.at(-1)! + 1] : []),
      });
      const count = await countList(list, { upTo: ids.at(-1)! });
      assert.equal(count.unsettled, null);
      assert.equal(count.listed, ids.length);
      assert.equal(count.withoutRawId, unreadable.size);
      assert.deepEqual(count.missing, { count: 0, rawIds: [] });
      assert.equal(count.extra, 0);
      // Not much more than reading the list once.
      assert.ok(count.requests <= 1.5 * (ids.length / 10), `${count.requests} requests`);

      const victim = stored[rng.int(0, stored.length - 1)]!;
      const lost = await countList(fakeList({ ids, stored: without(stored, victim), unreadable }), {
        upTo: ids.at(-1)!,
      });
      assert.deepEqual(lost.missing, { count: 1, rawIds: [victim] });
      assert.equal(lost.withoutRawId, unreadable.size);
      assert.equal(lost.listed, lost.stored + lost.withoutRawId + lost.missing.count - lost.extra);
    });
  });
});
