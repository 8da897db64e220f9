import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createInFlightTarget } from '../../src/client/in-flight.js';

/** `n` list answers of `seconds` each. */
function answers(target: ReturnType<typeof createInFlightTarget>, n: number, seconds: number) {
  for (let i = 0; i < n; i++) target.observer.attempt('txsByKey', 'ok', seconds);
}

describe('the requests kept in flight', () => {
  it('spend the budget at the distance measured: 50 a second at 200 ms is fourteen in flight', () => {
    const target = createInFlightTarget({ requestsPerSecond: 50, ceiling: 32 });
    // Before any answer: the floor.
    assert.equal(target.size(), 2);
    answers(target, 1, 0.2);
    // 50 × 0.2 s = 10, a quarter more and one: 14.
    assert.equal(target.size(), 14);
    const budget100 = createInFlightTarget({ requestsPerSecond: 100, ceiling: 32 });
    answers(budget100, 1, 0.2);
    assert.equal(budget100.size(), 26);
  });

  it('follow the answer time as it moves, and stay at the floor near the service', () => {
    const target = createInFlightTarget({ requestsPerSecond: 50, ceiling: 64, floor: 3 });
    answers(target, 1, 0.005);
    assert.equal(target.size(), 3);
    answers(target, 200, 0.4);
    // The mean is near 0.4 s after many answers: 50 × 0.4 × 1.25 + 1 = 26.
    assert.equal(target.size(), 26);
    assert.ok(Math.abs((target.answerSeconds() ?? 0) - 0.4) < 0.01);
  });

  it('never pass the ceiling', () => {
    const capped = createInFlightTarget({ requestsPerSecond: 1000, ceiling: 8 });
    answers(capped, 1, 0.3);
    assert.equal(capped.size(), 8);
  });

  it("without a budget, hide the distance behind the machine's work: many far away, few nearby", () => {
    const far = createInFlightTarget({ requestsPerSecond: 0, ceiling: 64 });
    answers(far, 5, 0.2);
    // 0.2 s ÷ 8 ms an answer of local work, and the floor: 27.
    assert.equal(far.size(), 27);
    const near = createInFlightTarget({ requestsPerSecond: 0, ceiling: 64, floor: 3 });
    answers(near, 5, 0.004);
    assert.equal(near.size(), 4);
    // Answers slowed by the machine's own load (the mean) do not add lanes: the shortest counts.
    near.observer.attempt('txsByKey', 'ok', 0.05);
    assert.equal(near.size(), 4);
  });

  it('without a budget, keep more pages of ten records in flight than answers of a hundred', () => {
    const target = createInFlightTarget({ requestsPerSecond: 0, ceiling: 256 });
    answers(target, 3, 0.05);
    // 50 ms ÷ (80 µs × 100) = 7 answers by key; ÷ (80 µs × 10) = 63 pages.
    assert.equal(target.size(), 2 + 7);
    assert.equal(target.size(10), 2 + 63);
  });

  it('with a budget the machine cannot spend, size to the machine', () => {
    const target = createInFlightTarget({ requestsPerSecond: 10_000, ceiling: 256 });
    answers(target, 3, 0.1);
    assert.equal(target.size(), 2 + Math.ceil(0.1 / 0.008));
  });

  it('back off on refusals and timeouts, and creep back up on successes', () => {
    const target = createInFlightTarget({ requestsPerSecond: 50, ceiling: 32 });
    answers(target, 1, 0.2);
    for (let i = 0; i < 10; i++) target.observer.attempt('txsByKey', 'rate_limited', 0.01);
    // 14 × 0.95^10 ≈ 8.4.
    assert.equal(target.size(), 8);
    target.observer.attempt('txs', 'timeout', 10);
    assert.equal(target.size(), 8);
    for (let i = 0; i < 40; i++) target.observer.attempt('txs', 'rate_limited', 0.01);
    assert.equal(target.size(), 1);
    // Back to the full size after enough answers (1.05 an answer), the mean hardly moved.
    answers(target, 60, 0.2);
    assert.equal(target.size(), 14);
  });

  it('learn only from the lists: look-ups and other calls leave the size alone', () => {
    const target = createInFlightTarget({ requestsPerSecond: 50, ceiling: 32 });
    target.observer.attempt('info', 'ok', 3);
    target.observer.attempt('txsByHash', 'rate_limited', 0.01);
    assert.equal(target.answerSeconds(), null);
    assert.equal(target.size(), 2);
  });
});
