import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { createRedisConnection } from '../../src/queue/connection.js';
import { createSharedRequestBudget } from '../../src/queue/shared-request-budget.js';
import { busiestSecond } from '../helpers/proxy.js';
import { type PrivateRedis, startPrivateRedis } from '../helpers/redis.js';

/** Calls of each command the server has run so far (its own `INFO commandstats`). */
async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
  return calls;
}

function delta(before: Record<string, number>, after: Record<string, number>, name: string): number {
  return (after[name] ?? 0) - (before[name] ?? 0);
}

describe('shared request budget', () => {
  // A server of its own, so the command counts are this file's alone.
  let server: PrivateRedis;
  let redis: Redis;
  let other: Redis;
  let watcher: Redis;

  before(async () => {
    server = await startPrivateRedis();
    redis = createRedisConnection(server.url, 'producer');
    other = createRedisConnection(server.url, 'producer');
    watcher = createRedisConnection(server.url, 'producer');
  });
  after(async () => {
    for (const connection of [redis, other, watcher]) connection.disconnect();
    await server.stop();
  });

  it('without a rate, a burst of requests costs at most one Redis read per check interval', async () => {
    const budget = createSharedRequestBudget({ redis, prefix: 'burst', perSecond: 0 });
    const start = await commandCalls(watcher);
    const started = Date.now();
    await Promise.all(Array.from({ length: 1000 }, () => budget.take()));
    const elapsed = Date.now() - started;
    const end = await commandCalls(watcher);
    assert.equal(delta(start, end, 'eval') + delta(start, end, 'evalsha'), 0);
    assert.ok(
      delta(start, end, 'pttl') <= 1 + Math.ceil(elapsed / 200),
      `${delta(start, end, 'pttl')} reads`,
    );
    assert.equal(await redis.exists('burst:request-budget:due'), 0, 'no rate is counted');
  });

  it('with a rate, requests run the script by its SHA rather than sending its text', async () => {
    const budget = createSharedRequestBudget({ redis, prefix: 'sha', perSecond: 100_000 });
    await budget.take();
    const start = await commandCalls(watcher);
    for (let i = 0; i < 50; i++) await budget.take();
    const end = await commandCalls(watcher);
    assert.equal(delta(start, end, 'evalsha'), 50);
    assert.equal(delta(start, end, 'eval'), 0);
  });

  it('with a rate, holders on separate connections together release at most rate + burst in any second', async () => {
    const a = createSharedRequestBudget({ redis, prefix: 'window', perSecond: 10 });
    const b = createSharedRequestBudget({ redis: other, prefix: 'window', perSecond: 10 });
    const released: number[] = [];
    const take = (budget: typeof a) => budget.take().then(() => released.push(performance.now()));
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    await take(a);
    // A quiet spell, then a crowd: a budget counted in fixed one-second windows would let most
    // of a second's worth go at once, and another second's worth when the window turns.
    await new Promise((resolve) => setTimeout(resolve, 700));
    await Promise.all(Array.from({ length: 16 }, (_, i) => take(i % 2 ? a : b)));
    loopDelay.disable();
    // Burst 1; a timestamp taken in a callback can be late by as much as the event loop was.
    const limit = 10 + 1 + Math.ceil(((loopDelay.max / 1e6) * 10) / 1000);
    assert.ok(busiestSecond(released) <= limit, `${busiestSecond(released)} released within one second`);
  });

  it('with a rate, callers waiting in one process cost about one Redis call per request', async () => {
    const budget = createSharedRequestBudget({ redis, prefix: 'calls', perSecond: 30 });
    const start = await commandCalls(watcher);
    await Promise.all(Array.from({ length: 60 }, () => budget.take()));
    const end = await commandCalls(watcher);
    const calls = delta(start, end, 'evalsha') + delta(start, end, 'eval');
    assert.ok(calls <= 60 + 5, `${calls} Redis calls for 60 requests`);
  });

  it('without a rate, a pause set by another process stops requests within the check interval until it ends', async () => {
    const budget = createSharedRequestBudget({ redis, prefix: 'pause', perSecond: 0, pauseCheckMs: 50 });
    const pauser = createSharedRequestBudget({ redis: other, prefix: 'pause', perSecond: 0 });
    await budget.take();
    // Timed from before the pause is asked: it ends no sooner than 400 ms after this, however late
    // the answer to the ask comes back on a busy machine.
    const pausedAt = Date.now();
    await pauser.pause(400);
    const asked = Date.now() - pausedAt;
    const passed: number[] = [];
    while (Date.now() - pausedAt < 600) {
      await budget.take();
      passed.push(Date.now() - pausedAt);
      await yieldToLoop();
    }
    const during = passed.filter((t) => t > asked + 50 + 20 && t < 380);
    assert.deepEqual(during, [], 'requests went out while the service asked to wait');
    assert.ok(
      passed.some((t) => t >= 380),
      'requests resume after the pause',
    );
  });

  it('a shorter pause never cuts a longer one short', async () => {
    const a = createSharedRequestBudget({ redis, prefix: 'longer', perSecond: 0 });
    const b = createSharedRequestBudget({ redis: other, prefix: 'longer', perSecond: 5 });
    await a.pause(500);
    await b.pause(50);
    const started = Date.now();
    await b.take();
    assert.ok(Date.now() - started >= 400, `waited only ${Date.now() - started} ms`);
  });
});
