import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchedRead, ReadDeadlineError, sharedRead, withinDeadline } from '../../src/app/shared-read.js';
import { connectFailure } from '../../src/db/pool.js';

describe('sharedRead', () => {
  it('runs one computation for concurrent callers and reuses its outcome within reuseMs', async () => {
    let clock = 0;
    let runs = 0;
    const read = sharedRead(
      async () => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        return runs;
      },
      { reuseMs: 1000, now: () => clock },
    );
    assert.deepEqual(await Promise.all(Array.from({ length: 50 }, () => read())), Array(50).fill(1));
    clock = 999;
    assert.equal(await read(), 1);
    clock = 1000;
    assert.equal(await read(), 2);
  });

  it('shares a failure too, and tries again once it is older than reuseMs', async () => {
    let clock = 0;
    let runs = 0;
    const read = sharedRead(
      async () => {
        runs++;
        throw new Error(`failure ${runs}`);
      },
      { reuseMs: 1000, now: () => clock },
    );
    await assert.rejects(read(), /failure 1/);
    await assert.rejects(read(), /failure 1/);
    clock = 2000;
    await assert.rejects(read(), /failure 2/);
  });
});

describe('withinDeadline', () => {
  it('gives the value in time, else a ReadDeadlineError naming the deadline', async () => {
    assert.equal(await withinDeadline(Promise.resolve(7), 50), 7);
    const never = new Promise<number>(() => undefined);
    await assert.rejects(
      withinDeadline(never, 20),
      (error: unknown) => error instanceof ReadDeadlineError && /within 20 ms/.test(error.message),
    );
  });
});

describe('connectFailure', () => {
  it('says "cannot connect" for a failure to connect without a code, with the deadline once reached', () => {
    assert.equal(
      connectFailure(new Error('timeout'), 2001, 2000).message,
      'cannot connect: no answer within 2000 ms',
    );
    assert.equal(connectFailure(new Error('terminated'), 10, 2000).message, 'cannot connect');
    const refused = Object.assign(new Error('connect ECONNREFUSED'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    assert.equal(connectFailure(refused, 1, 2000).message, 'cannot connect (ECONNREFUSED)');
  });
});

describe('batchedRead', () => {
  /** A read of many that doubles each key, a tick late, remembering each read's keys. */
  function doubling(fail?: (keys: number[]) => boolean) {
    const reads: number[][] = [];
    const readMany = async (keys: number[]) => {
      reads.push(keys);
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (fail?.(keys)) throw new Error(`failed ${keys.join()}`);
      return keys.map((key) => key * 2);
    };
    return { reads, readMany };
  }

  it('reads a key alone at once, and the keys asked while the reads run together, in order', async () => {
    const { reads, readMany } = doubling();
    const read = batchedRead(readMany, { inFlight: 2, most: 100 });
    assert.equal(await read(7), 14);
    const keys = Array.from({ length: 30 }, (_, i) => i);
    assert.deepEqual(
      await Promise.all(keys.map((key) => read(key))),
      keys.map((key) => key * 2),
    );
    assert.deepEqual(reads, [[7], [0], [1], keys.slice(2)]);
  });

  it('reads at most `most` keys at once', async () => {
    const { reads, readMany } = doubling();
    const read = batchedRead(readMany, { inFlight: 1, most: 10 });
    await Promise.all(Array.from({ length: 25 }, (_, i) => read(i)));
    assert.deepEqual(
      reads.map((keys) => keys.length),
      [1, 10, 10, 4],
    );
  });

  it('fails the keys of a failed read only, and goes on reading', async () => {
    const { readMany } = doubling((keys) => keys.includes(3));
    const read = batchedRead(readMany, { inFlight: 1, most: 100 });
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((key) => read(key)));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'rejected', 'rejected'],
    );
    assert.equal(await read(5), 10);
  });
});
