import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sharedCoverageReads } from '../../src/app/read-api/coverage-reads.js';
import type { StreamCoverage } from '../../src/db/queries/read-api/stream-coverage.js';
import type { Executor } from '../../src/db/rows.js';

const db = {} as Executor;

/** A coverage read that answers the watermark `mark()` holds when it runs, and counts its reads. */
function counted(mark: () => number) {
  const reads: string[][] = [];
  const select = async (_db: Executor, keys: readonly string[]): Promise<StreamCoverage[]> => {
    reads.push([...keys]);
    await new Promise((resolve) => setTimeout(resolve, 2));
    return keys.map((key) => ({
      key,
      watermark: mark(),
      headRawId: null,
      headSeenAt: null,
      lastSuccessAt: null,
    }));
  };
  return { select, reads };
}

describe('the read API coverage reads', () => {
  it('serves every answer from one read of the same keys for reuseMs after it, then reads again', async () => {
    let clock = 0;
    let watermark = 100;
    const { select, reads } = counted(() => watermark);
    const read = sharedCoverageReads({ reuseMs: 50, now: () => clock, select });
    const first = await Promise.all(Array.from({ length: 20 }, () => read(db, ['txs'])));
    assert.ok(first.every((streams) => streams[0]?.watermark === 100));
    assert.equal(reads.length, 1, 'one read for twenty answers at once');
    watermark = 200;
    clock = 49;
    assert.equal((await read(db, ['txs']))[0]?.watermark, 100, 'at most reuseMs old');
    clock = 50;
    assert.equal((await read(db, ['txs']))[0]?.watermark, 200, 'read again once older');
    assert.equal(reads.length, 2);
  });

  it('reads each set of keys apart', async () => {
    const { select, reads } = counted(() => 1);
    const read = sharedCoverageReads({ reuseMs: 50, now: () => 0, select });
    await read(db, ['txs']);
    await read(db, ['txs', 'txsByAccount/a']);
    await read(db, ['txs']);
    assert.deepEqual(reads, [['txs'], ['txs', 'txsByAccount/a']]);
  });
});
