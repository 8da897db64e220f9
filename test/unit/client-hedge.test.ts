import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHedgePolicy } from '../../src/client/hedge-policy.js';
import { runHedged } from '../../src/client/hedged-call.js';
import type { AbortLike } from '../../src/client/stop-token.js';

function recordAll(policy: ReturnType<typeof createHedgePolicy>, samples: number[]): void {
  for (const ms of samples) policy.record(ms);
}

describe('hedge policy', () => {
  it('does not hedge before it has seen enough answers', () => {
    const policy = createHedgePolicy({ after: 3, minMs: 0, minSamples: 4 });
    recordAll(policy, [10, 10, 10]);
    assert.equal(policy.delayMs(), undefined);
    policy.record(10);
    assert.equal(policy.delayMs(), 30);
  });

  it('waits the multiple of the median, not of the mean, and never less than the floor', () => {
    const policy = createHedgePolicy({ after: 3, minMs: 0, minSamples: 5 });
    recordAll(policy, [20, 10, 9000, 30, 40]);
    assert.equal(policy.median(), 30);
    assert.equal(policy.delayMs(), 90);
    const floored = createHedgePolicy({ after: 3, minMs: 500, minSamples: 5 });
    recordAll(floored, [20, 10, 9000, 30, 40]);
    assert.equal(floored.delayMs(), 500);
    policy.record(50);
    assert.equal(policy.median(), 35);
  });

  it('follows the recent answers only', () => {
    const policy = createHedgePolicy({ after: 2, minMs: 0, window: 4, minSamples: 4 });
    recordAll(policy, [100, 100, 100, 100]);
    assert.equal(policy.delayMs(), 200);
    recordAll(policy, [10, 12, 11]);
    assert.equal(policy.median(), 11.5);
    policy.record(13);
    assert.equal(policy.median(), 11.5);
    assert.equal(policy.delayMs(), 23);
  });

  it('never hedges when switched off', () => {
    const policy = createHedgePolicy({ after: 0, minMs: 0, minSamples: 1 });
    recordAll(policy, [10, 10, 10]);
    assert.equal(policy.delayMs(), undefined);
  });

  it('spends an allowance that answers refill, so a slow service is not sent twice the load', () => {
    const policy = createHedgePolicy({ after: 2, minMs: 0, burst: 2, ratio: 0.25 });
    assert.equal(policy.takeHedge(), true);
    assert.equal(policy.takeHedge(), true);
    assert.equal(policy.takeHedge(), false);
    recordAll(policy, [10, 10, 10]);
    assert.equal(policy.takeHedge(), false);
    policy.record(10);
    assert.equal(policy.takeHedge(), true);
    recordAll(
      policy,
      Array.from({ length: 100 }, () => 10),
    );
    assert.equal(policy.takeHedge(), true);
    assert.equal(policy.takeHedge(), true);
    assert.equal(policy.takeHedge(), false);
  });
});

/** A policy that hedges after `delayMs` at once, with a large allowance. */
function eager(delayMs: number) {
  const policy = createHedgePolicy({ after: 1, minMs: delayMs, minSamples: 1, burst: 10 });
  policy.record(1);
  return policy;
}

/** A call that answers `value` after `ms`, or rejects with the signal's reason when stopped. */
function answerAfter<T>(ms: number, value: T, signal: AbortLike | undefined): Promise<T> {
  return settleAfter(ms, () => value, signal);
}

/** A call that fails with `error` after `ms`, or rejects with the signal's reason when stopped. */
function failAfter(ms: number, error: Error, signal: AbortLike | undefined): Promise<never> {
  return settleAfter(
    ms,
    () => {
      throw error;
    },
    signal,
  );
}

function settleAfter<T>(ms: number, settle: () => T, signal: AbortLike | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        resolve(settle());
      } catch (error) {
        reject(error);
      }
    }, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

describe('hedged call', () => {
  it('sends one request when the answer comes before the delay', async () => {
    const signals: Array<AbortLike | undefined> = [];
    const result = await runHedged({
      policy: eager(200),
      call: (signal) => {
        signals.push(signal);
        return answerAfter(5, 'page', signal);
      },
    });
    assert.equal(result, 'page');
    assert.equal(signals.length, 1);
  });

  it('sends a second request for a slow answer; the first answer wins and the other is aborted', async () => {
    const signals: Array<AbortLike | undefined> = [];
    const hedged: number[] = [];
    const start = performance.now();
    const result = await runHedged({
      policy: eager(30),
      call: (signal) => {
        signals.push(signal);
        return signals.length === 1 ? answerAfter(60_000, 'slow', signal) : answerAfter(5, 'hedge', signal);
      },
      onHedge: (delayMs) => hedged.push(delayMs),
    });
    assert.equal(result, 'hedge');
    assert.ok(performance.now() - start < 5000);
    assert.deepEqual(hedged, [30]);
    assert.equal(signals[0]?.aborted, true);
    assert.equal(signals[1]?.aborted, false);
  });

  it('waits for the other request when one fails, and fails with the first error when both do', async () => {
    let calls = 0;
    const recovered = await runHedged({
      policy: eager(10),
      call: (signal) =>
        ++calls === 1 ? failAfter(40, new Error('first'), signal) : answerAfter(80, 'second', signal),
    });
    assert.equal(recovered, 'second');

    calls = 0;
    await assert.rejects(
      runHedged({
        policy: eager(10),
        call: (signal) =>
          failAfter(++calls === 1 ? 60 : 20, new Error(calls === 1 ? 'first' : 'second'), signal),
      }),
      /first/,
    );
  });

  it('fails at once, without a hedge, when the only request fails before the delay', async () => {
    let calls = 0;
    await assert.rejects(
      runHedged({
        policy: eager(100),
        call: (signal) => {
          calls += 1;
          return failAfter(5, new Error('not found'), signal);
        },
      }),
      /not found/,
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(calls, 1);
  });

  it("aborts every request when the caller's signal aborts", async () => {
    const signals: Array<AbortLike | undefined> = [];
    const controller = new AbortController();
    const call = runHedged({
      policy: eager(10),
      call: (signal) => {
        signals.push(signal);
        return answerAfter(60_000, 'never', signal);
      },
      signal: controller.signal,
    });
    while (signals.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('shutting down'));
    await assert.rejects(call, /shutting down/);
    assert.ok(signals.every((signal) => signal?.aborted));
  });

  it('sends no second request when the allowance is spent', async () => {
    const policy = createHedgePolicy({ after: 1, minMs: 10, minSamples: 1, burst: 1, ratio: 0 });
    policy.record(1);
    assert.equal(policy.takeHedge(), true);
    let calls = 0;
    const result = await runHedged({
      policy,
      call: (signal) => {
        calls += 1;
        return answerAfter(60, 'slow', signal);
      },
    });
    assert.equal(result, 'slow');
    assert.equal(calls, 1);
  });
});
