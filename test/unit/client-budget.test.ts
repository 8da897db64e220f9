import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRequestBudget } from '../../src/client/request-budget.js';

describe('request budget', () => {
  it('lets the burst go at once, then paces at the rate', async () => {
    const budget = createRequestBudget({ requestsPerSecond: 50, burst: 5 });
    const start = performance.now();
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 15 }, () => budget.take().then(() => done.push(performance.now() - start))),
    );
    done.sort((a, b) => a - b);
    assert.ok((done[4] ?? Infinity) < 15, `burst took ${done[4]} ms`);
    // 10 past the burst at 50/s: the last goes no earlier than 200 ms.
    assert.ok((done[14] ?? 0) >= 195, `last went at ${done[14]} ms`);
    assert.ok((done[14] ?? Infinity) < 600, `last went at ${done[14]} ms`);
  });

  it('serves waiting callers in arrival order', async () => {
    const budget = createRequestBudget({ requestsPerSecond: 200, burst: 1 });
    const order: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => budget.take().then(() => order.push(i))));
    assert.deepEqual(
      order,
      Array.from({ length: 20 }, (_, i) => i),
    );
  });

  it('refills while idle, never beyond the burst', async () => {
    let now = 0;
    const budget = createRequestBudget({ requestsPerSecond: 10, burst: 2, now: () => now });
    const settledAtOnce = async (): Promise<{ settled: boolean; promise: Promise<void> }> => {
      let settled = false;
      const promise = budget.take().then(() => {
        settled = true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      return { settled, promise };
    };
    assert.equal((await settledAtOnce()).settled, true);
    assert.equal((await settledAtOnce()).settled, true);
    now = 10_000;
    assert.equal((await settledAtOnce()).settled, true);
    assert.equal((await settledAtOnce()).settled, true);
    const third = await settledAtOnce();
    assert.equal(third.settled, false);
    now += 100;
    await third.promise;
  });

  it('lets an aborted waiter leave the queue without taking a token', async () => {
    let now = 0;
    const budget = createRequestBudget({ requestsPerSecond: 10, burst: 1, now: () => now });
    await budget.take();
    const controller = new AbortController();
    const leaving = budget.take(controller.signal);
    const staying = budget.take();
    controller.abort(new Error('gone'));
    await assert.rejects(leaving, /gone/);
    now += 100;
    await staying;
  });

  it('is unlimited at 0 requests per second', async () => {
    const budget = createRequestBudget({ requestsPerSecond: 0 });
    const start = performance.now();
    await Promise.all(Array.from({ length: 1000 }, () => budget.take()));
    assert.ok(performance.now() - start < 100);
  });

  it('gives up a wait when its signal aborts', async () => {
    const budget = createRequestBudget({ requestsPerSecond: 1, burst: 1 });
    await budget.take();
    const controller = new AbortController();
    const waiting = budget.take(controller.signal);
    controller.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
  });
});
