import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LedgerTx, TxKeyPage } from '../../src/domain/model.js';
import { createKeySource, readKeyAfter } from '../../src/sync/key-source.js';
import type { FetchKeyPage } from '../../src/sync/ports/fetches.js';
import type { RawIdScreen } from '../../src/sync/raw-id-screen.js';
import { countListByKey, type KeyCountPorts, type KeySpan } from '../../src/verify/key-count.js';

/** A screen that sets nothing aside: these lists vouch for every rawId. */
const passAll: RawIdScreen = { screen: async (answer) => answer, passes: () => true };

const range = (lo: number, hi: number): number[] => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

/**
 * A list over `ids` (ascending) served by key, at most `cap` records an answer, and a table
 * holding `stored`; records in `unreadable` are served without a readable rawId. Every span
 * compared is kept, with the records it was given.
 */
function fakeList(input: {
  ids: number[];
  stored: Iterable<number>;
  cap?: number;
  unreadable?: ReadonlySet<number>;
  differing?: ReadonlySet<number>;
  /** Answers with no record although more follow, before the list is served. */
  emptyAnswers?: number;
}): KeyCountPorts & { spans: KeySpan[]; cursors: number[] } {
  const stored = new Set(input.stored);
  const spans: KeySpan[] = [];
  const cursors: number[] = [];
  let empty = input.emptyAnswers ?? 0;
  const fetchKeyPage: FetchKeyPage = async (_spec, { cursor }) => {
    cursors.push(cursor);
    if (empty-- > 0) return { txs: [], rejected: [], hasNextPage: true };
    const after = input.ids.filter((id) => id > cursor);
    const served = after.slice(0, input.cap ?? 100);
    const txs: LedgerTx[] = [];
    const rejected: TxKeyPage['rejected'] = [];
    served.forEach((id, index) => {
      if (input.unreadable?.has(id)) rejected.push({ reason: 'rawId missing', raw: `{"n":${id}}`, index });
      else txs.push({ rawId: id } as LedgerTx);
    });
    return { txs, rejected, hasNextPage: after.length > served.length };
  };
  // Read as the walk by key reads the list: the source by key, one answer after the other.
  const reading = { fetchKeyPage, screen: passAll, spec: {}, emptyDelayMs: 1 };
  const source = createKeySource({
    task: { after: 0, upTo: Number.POSITIVE_INFINITY },
    read: async (after, upTo) => ({ served: await readKeyAfter(reading, after ?? 0, upTo), readAt: 0 }),
    settle: { windowMs: 0, headAt: undefined },
  });
  let ended = false;
  return {
    spans,
    cursors,
    async next() {
      if (ended) return null;
      const step = await source.next();
      ended = step.ends;
      return { proven: step.proven, served: step.read.served, rejected: step.rejected };
    },
    async compareSpan(span) {
      spans.push(span);
      const inSpan = (id: number) => id <= span.atOrBelow && (span.above === null || id > span.above);
      const listed = new Set([...span.records.map((tx) => tx.rawId), ...span.rejectedRawIds]);
      const held = [...stored].filter(inSpan).sort((a, b) => a - b);
      const unlisted = held.filter((id) => !listed.has(id));
      return {
        stored: held.length,
        missing: [...listed].filter((id) => !stored.has(id)).sort((a, b) => a - b),
        extra: { count: unlisted.length, rawIds: unlisted.slice(0, 20) },
        differing: [...listed]
          .filter((id) => input.differing?.has(id))
          .map((rawId) => ({ rawId, fields: ['amount'] })),
      };
    },
  };
}

describe('countListByKey', () => {
  it('walks the whole list from the bottom, following a silent cap; spans touch, records above the mark apart', async () => {
    const ids = range(1, 250);
    const list = fakeList({ ids, stored: range(1, 200), cap: 37 });
    const { count, head, walked } = await countListByKey(list, { upTo: 200 });
    assert.equal(count.requests, Math.ceil(250 / 37));
    assert.deepEqual(list.cursors, [0, 37, 74, 111, 148, 185, 222]);
    assert.equal(head, 250);
    assert.deepEqual(walked, { atOrBelow: 200, above: 50 });
    assert.equal(count.listed, 200);
    assert.equal(count.stored, 200);
    assert.equal(count.above, 50);
    assert.equal(count.top, 200);
    assert.deepEqual(count.missing, { count: 0, rawIds: [] });
    assert.equal(count.extra, 0);
    // Each span starts where the one before ended; the last ends at the mark.
    assert.equal(list.spans[0]!.above, null);
    for (let i = 1; i < list.spans.length; i++)
      assert.equal(list.spans[i]!.above, list.spans[i - 1]!.atOrBelow);
    assert.equal(list.spans.at(-1)!.atOrBelow, 200);
    assert.ok(
      list.spans.every((s) => s.records.length <= 37),
      'one answer at a time',
    );
  });

  it('names missing, unlisted and differing rawIds and counts every one', async () => {
    const ids = range(1, 300).filter((id) => id % 50 !== 0);
    const stored = [...range(1, 300).filter((id) => id !== 120 && id !== 121), 150];
    const list = fakeList({ ids, stored, differing: new Set([7]) });
    const { count } = await countListByKey(list, { upTo: 300 });
    assert.deepEqual(count.missing, { count: 2, rawIds: [120, 121] });
    // 50, 100, 150, 200, 250, 300 are held but not listed.
    assert.equal(count.extra, 6);
    assert.deepEqual(count.extraRawIds, [50, 100, 150, 200, 250, 300]);
    assert.deepEqual(count.differing, { count: 1, records: [{ rawId: 7, fields: ['amount'] }] });
    assert.equal(count.listed, count.stored + count.withoutRawId + count.missing.count - count.extra);
  });

  it('keeps only the first names, counts the rest', async () => {
    const list = fakeList({ ids: range(1, 1000), stored: [] });
    const { count } = await countListByKey(list, { upTo: 1000, nameAtMost: 5 });
    assert.deepEqual(count.missing, { count: 1000, rawIds: [1, 2, 3, 4, 5] });
  });

  it('counts records without a readable rawId apart, at or below the mark or above it by their neighbours', async () => {
    const unreadable = new Set([5, 99, 101, 150]);
    const ids = range(1, 150);
    const stored = ids.filter((id) => id <= 100 && !unreadable.has(id));
    const list = fakeList({ ids, stored, unreadable, cap: 40 });
    const { count } = await countListByKey(list, { upTo: 100 });
    assert.equal(count.withoutRawId, 2);
    assert.equal(count.listed, 100);
    assert.equal(count.above, 50);
    assert.deepEqual(count.missing, { count: 0, rawIds: [] });
    assert.equal(count.listed, count.stored + count.withoutRawId + count.missing.count - count.extra);
  });

  it('counts once a record without a readable rawId that ends an answer and opens the next', async () => {
    // Answers of 40: 40 and 79-80 end theirs, after the last readable rawId; the next answer,
    // asked after that rawId, lists them again first. 150 ends the list.
    const unreadable = new Set([39, 40, 79, 80, 150]);
    const ids = range(1, 150);
    const stored = ids.filter((id) => id <= 100 && !unreadable.has(id));
    const list = fakeList({ ids, stored, unreadable, cap: 40 });
    const { count } = await countListByKey(list, { upTo: 100 });
    assert.ok(
      list.cursors.includes(38) && list.cursors.includes(78),
      'the unreadable ones were served twice',
    );
    assert.equal(count.withoutRawId, 4);
    assert.equal(count.listed, 100);
    assert.equal(count.above, 50);
    assert.equal(count.listed, count.stored + count.withoutRawId + count.missing.count - count.extra);
  });

  it('counts once a record without a readable rawId where two ranges read at once meet in a hole', async () => {
    // The lower range ends at 11, a hole: it reads on to 13, the first record above, and counts
    // 12 (unreadable) before it. The range above, asked after 11, lists 12 first again.
    const ids = [...range(1, 10), ...range(12, 20)];
    const unreadable = new Set([12]);
    const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count }) => {
      const after = ids.filter((id) => id > cursor);
      const served = after.slice(0, count ?? 100);
      const txs: LedgerTx[] = [];
      const rejected: TxKeyPage['rejected'] = [];
      served.forEach((id, index) => {
        if (unreadable.has(id)) rejected.push({ reason: 'rawId missing', raw: `{"n":${id}}`, index });
        else txs.push({ rawId: id } as LedgerTx);
      });
      return { txs, rejected, hasNextPage: after.length > served.length };
    };
    const reading = { fetchKeyPage, screen: passAll, spec: {}, count: 100, emptyDelayMs: 1 };
    const sources = [
      { after: 0, upTo: 11 },
      { after: 11, upTo: Number.POSITIVE_INFINITY },
    ].map((task) =>
      createKeySource({
        task,
        read: async (after, upTo) => ({ served: await readKeyAfter(reading, after ?? 0, upTo), readAt: 0 }),
        settle: { windowMs: 0, headAt: undefined },
      }),
    );
    const stored = ids.filter((id) => !unreadable.has(id));
    const list = fakeList({ ids, stored });
    let ended = false;
    const ports: KeyCountPorts = {
      async next() {
        while (sources.length > 0 && ended) {
          sources.shift();
          ended = false;
        }
        const source = sources[0];
        if (source === undefined) return null;
        const step = await source.next();
        ended = step.ends;
        return { proven: step.proven, served: step.read.served, rejected: step.rejected };
      },
      compareSpan: (span) => list.compareSpan(span),
    };
    const { count } = await countListByKey(ports, { upTo: 20 });
    assert.equal(count.withoutRawId, 1, 'the unreadable record, once');
    assert.equal((count.listed ?? 0) + (count.above ?? 0), ids.length);
    assert.deepEqual(count.missing, { count: 0, rawIds: [] });
  });

  it('a table holding records beyond the end of the list: they are not listed', async () => {
    const list = fakeList({ ids: range(1, 50), stored: range(1, 60) });
    const { count } = await countListByKey(list, { upTo: 60 });
    assert.equal(count.extra, 10);
    assert.deepEqual(count.extraRawIds, range(51, 60));
  });

  it('an empty list: every stored record is unlisted', async () => {
    const list = fakeList({ ids: [], stored: [3, 4] });
    const { count, head } = await countListByKey(list, { upTo: 10 });
    assert.equal(head, null);
    assert.equal(count.listed, 0);
    assert.equal(count.extra, 2);
  });

  it('asks an empty answer again, then says the list could not be read', async () => {
    const recovers = fakeList({ ids: range(1, 20), stored: range(1, 20), emptyAnswers: 2 });
    assert.equal((await countListByKey(recovers, { upTo: 20 })).count.unsettled, null);
    const stuck = fakeList({ ids: range(1, 20), stored: range(1, 20), emptyAnswers: 10 });
    const { count } = await countListByKey(stuck, { upTo: 20 });
    assert.match(count.unsettled ?? '', /after rawId 0: empty answer although more records follow/);
  });

  it('without a mark (never synced) it reads the list and compares nothing', async () => {
    const list = fakeList({ ids: range(1, 30), stored: [] });
    const { count, head } = await countListByKey(list, { upTo: -1 });
    assert.equal(head, 30);
    assert.equal(count.above, 30);
    assert.equal(list.spans.length, 0);
  });
});
