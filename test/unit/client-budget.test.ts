import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { createRequestBudget } from '../../src/client/request-budget.js';

describe('request budget', () => {
  it('lets the burst go at once, then one request per 1/rate seconds', async () => {
    let now = 0;
    const budget = createRequestBudget({ requestsPerSecond: 50, burst: 5, now: () => now });
    let settled = 0;
    const all = Promise.all(
      Array.from({ length: 15 }, () =>
        budget.take().then(() => {
          settled += 1;
        }),
      ),
    );
    const settle = async (want: number): Promise<void> => {
      const deadline = performance.now() + 2000;
      while (settled < want && performance.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 1));
    };
    await settle(5);
    assert.equal(settled, 5, 'the burst');
    now = 100; // five tokens' worth at 50/s
    await settle(10);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(settled, 10, 'five more after 100 ms, not more');
    now = 10_000; // a long pause refills the bucket to the burst, never beyond it
    await all;
    assert.equal(settled, 15);
  });

  it('releases at most burst + rate x T in any T on the real clock', async () => {
    const budget = createRequestBudget({ requestsPerSecond: 200, burst: 10 });
    // A timestamp taken in a callback is late by as much as the event loop was.
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const start = performance.now();
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: 110 }, () => budget.take().then(() => times.push(performance.now()))),
    );
    const elapsed = performance.now() - start;
    loopDelay.disable();
    const slack = Math.ceil(((loopDelay.max / 1e6) * 200) / 1000);
    // 100 past the burst at 200/s: no earlier than 500 ms.
    assert.ok(elapsed >= 495, `took ${elapsed} ms`);
    for (let i = 0; i < times.length; i++) {
      const within = times.filter((t) => t >= (times[i] ?? 0) && t < (times[i] ?? 0) + 250).length;
      assert.ok(within <= 10 + 50 + slack, `${within} released within 250 ms`);
    }
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

  it('keeps serving in order while a long queue is partly served', async () => {
    let now = 0;
    const budget = createRequestBudget({ requestsPerSecond: 1000, burst: 2000, now: () => now });
    const order: number[] = [];
    const all = Promise.all(Array.from({ length: 4000 }, (_, i) => budget.take().then(() => order.push(i))));
    now = 1200;
    const deadline = performance.now() + 2000;
    while (order.length < 3200 && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 2));
    assert.equal(order.length, 3200);
    now = 5000;
    await all;
    assert.deepEqual(
      order,
      Array.from({ length: 4000 }, (_, i) => i),
    );
  });

  it('is unlimited at 0 requests per second', async () => {
    const budget = createRequestBudget({ requestsPerSecond: 0 });
    let settled = 0;
    for (let i = 0; i < 1000; i++) {
      budget.take().then(() => {
        settled += 1;
      });
    }
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, 1000, 'no caller waits for a timer');
  });

  it('releases nothing while paused, whatever its rate, and a shorter pause never cuts a longer one', async () => {
    for (const requestsPerSecond of [0, 1000]) {
      const budget = createRequestBudget({ requestsPerSecond, burst: 100 });
      await budget.take();
      const start = performance.now();
      budget.pause?.(300);
      budget.pause?.(50);
      const released: number[] = [];
      await Promise.all(
        Array.from({ length: 5 }, () => budget.take().then(() => released.push(performance.now() - start))),
      );
      assert.equal(released.length, 5);
      for (const at of released)
        assert.ok(at >= 295, `released ${at} ms into a 300 ms pause (${requestsPerSecond}/s)`);
    }
  });

  it('lets a wait for the end of a pause be aborted', async () => {
    for (const requestsPerSecond of [0, 1000]) {
      const budget = createRequestBudget({ requestsPerSecond });
      budget.pause?.(10_000);
      const controller = new AbortController();
      const waiting = budget.take(controller.signal);
      controller.abort(new Error('stop'));
      await assert.rejects(waiting, /stop/);
    }
  });

  it('gives up a wait when its signal aborts', async () => {
    const budget = createRequestBudget({ requestsPerSecond: 20, burst: 1 });
    await budget.take();
    const controller = new AbortController();
    const waiting = budget.take(controller.signal);
    controller.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
  });
});
