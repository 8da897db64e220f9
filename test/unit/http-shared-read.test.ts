import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReadDeadlineError, sharedRead, withinDeadline } from '../../src/app/shared-read.js';
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
