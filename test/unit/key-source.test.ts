import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TxKeyPage } from '../../src/domain/model.js';
import { MalformedResponseError } from '../../src/errors.js';
import { createKeySource, type KeyRead, readKeyAfter } from '../../src/sync/key-source.js';
import type { FetchKeyPage } from '../../src/sync/ports/fetches.js';
import { keyWalkScreen } from '../../src/sync/raw-id-screen.js';
import { quietLogger } from '../../src/sync/sync-logger.js';
import { makeTx } from './sync-fakes.js';

/** A list by key over `ids`, `count` records an answer; every request is kept. */
function listOf(ids: number[], count = 3) {
  const asked: Array<{ cursor: number | null; upTo: number }> = [];
  const read = async (cursor: number | null, upTo: number): Promise<KeyRead> => {
    asked.push({ cursor, upTo });
    const after = ids.filter((id) => cursor === null || id > cursor);
    const txs = after.slice(0, count).map((rawId) => ({ rawId, timestamp: 1 }));
    return { served: { txs, rejected: [], hasNextPage: after.length > count }, readAt: 0 };
  };
  return { read, asked };
}

const settled = { windowMs: 0, headAt: undefined };

describe('the source by key', () => {
  it('reads a closed range from just below it: spans that join, ending on the answer that reaches its top', async () => {
    const list = listOf([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const source = createKeySource({ task: { after: 2, upTo: 7 }, read: list.read, settle: settled });
    const first = await source.next();
    assert.deepEqual(first.proven, { lo: 3, hi: 5 });
    assert.equal(first.ends, false);
    assert.equal(first.last, 5);
    const second = await source.next();
    // Its last record (8) lies above the top: the span stops at the top, the range ends.
    assert.deepEqual(second.proven, { lo: 6, hi: 7 });
    assert.equal(second.ends, true);
    assert.deepEqual(
      list.asked.map((a) => a.cursor),
      [2, 5],
    );
  });

  it('reads the open top range to the end of the list, the bottom (rawId 0) included', async () => {
    const list = listOf([0, 4, 9, 12, 30]);
    const source = createKeySource({
      task: { after: null, upTo: Number.POSITIVE_INFINITY },
      read: list.read,
      settle: settled,
    });
    const steps = [await source.next(), await source.next()];
    assert.deepEqual(
      steps.map((s) => [s.proven, s.ends]),
      [
        [{ lo: 0, hi: 9 }, false],
        [{ lo: 10, hi: Number.POSITIVE_INFINITY }, true],
      ],
    );
  });

  it('gives the upper part of its range away only above its cursor and below its top', async () => {
    const list = listOf([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const source = createKeySource({ task: { after: 0, upTo: 10 }, read: list.read, settle: settled });
    await source.next();
    assert.equal(source.cut(3), false, 'at the cursor');
    assert.equal(source.cut(2), false, 'below the cursor');
    assert.equal(source.cut(10), false, 'at the top');
    assert.equal(source.cut(5), true);
    assert.equal(source.task.upTo, 5);
    const next = await source.next();
    assert.deepEqual(next.proven, { lo: 4, hi: 5 });
    assert.equal(next.ends, true);
    assert.equal(list.asked[1]?.upTo, 5, 'the read is told the lowered top');
  });

  it('keeps aside the records the answer set aside that are the range’s, a keyless one once', async () => {
    const keyless = { reason: 'bad amount', raw: '{"amount":"x"}' };
    const answers: TxKeyPage[] = [
      // A keyless record after the last rawId: the next answer, asked from rawId 2, lists it again first.
      {
        txs: [makeTx(1), makeTx(2)],
        rejected: [{ ...keyless, index: 2 }],
        hasNextPage: true,
      },
      {
        txs: [makeTx(3)],
        rejected: [
          { ...keyless, index: 0 },
          { reason: 'bad hash', raw: '{}', rawId: 9, index: 2 },
        ],
        hasNextPage: false,
      },
    ];
    const source = createKeySource({
      task: { after: 0, upTo: 5 },
      read: async () => ({ served: answers.shift()!, readAt: 0 }),
      settle: settled,
    });
    assert.equal((await source.next()).rejected.length, 1);
    // Neither the repeat nor rawId 9, which lies above the range.
    assert.deepEqual((await source.next()).rejected, []);
  });

  it('leaves open a gap read before it could settle, and none with a window of 0', async () => {
    const ids = [1, 2, 5, 6];
    const open = createKeySource({
      task: { after: 0, upTo: 10 },
      read: listOf(ids, 10).read,
      settle: { windowMs: 60_000, headAt: 0 },
    });
    assert.equal((await open.next()).openGap, 3);
    const closed = createKeySource({
      task: { after: 0, upTo: 10 },
      read: listOf(ids, 10).read,
      settle: settled,
    });
    assert.equal((await closed.next()).openGap, null);
  });
});

describe('reading an answer after a cursor', () => {
  const spec = {};

  it('asks no more than the range needs, and an empty answer that says more follow again with the full count', async () => {
    const counts: Array<number | undefined> = [];
    let empty = 1;
    const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count }) => {
      counts.push(count);
      if (empty-- > 0) return { txs: [], rejected: [], hasNextPage: true };
      return { txs: [makeTx(cursor + 1)], rejected: [], hasNextPage: false };
    };
    const screen = keyWalkScreen({ fetchKeyPage, spec, logger: quietLogger });
    const served = await readKeyAfter({ fetchKeyPage, screen, spec, count: 100, emptyDelayMs: 1 }, 50, 70);
    assert.deepEqual(
      served.txs.map((tx) => tx.rawId),
      [51],
    );
    assert.deepEqual(counts, [20, 100]);
  });

  it('fails as malformed, never loops, once the retries are spent', async () => {
    let asked = 0;
    const fetchKeyPage: FetchKeyPage = async () => {
      asked++;
      return { txs: [], rejected: [], hasNextPage: true };
    };
    const screen = keyWalkScreen({ fetchKeyPage, spec, logger: quietLogger });
    await assert.rejects(
      readKeyAfter(
        { fetchKeyPage, screen, spec, emptyRetries: 2, emptyDelayMs: 1 },
        0,
        Number.POSITIVE_INFINITY,
      ),
      MalformedResponseError,
    );
    assert.equal(asked, 3);
  });
});
