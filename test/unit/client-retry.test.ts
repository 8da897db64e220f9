import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRetryAfter, retryDelayMs } from '../../src/client/retry-after.js';

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delay-seconds', () => {
    assert.equal(parseRetryAfter('1', now), 1000);
    assert.equal(parseRetryAfter(' 120 ', now), 120_000);
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter('1.5', now), 1500);
    assert.equal(parseRetryAfter(['3', '9'], now), 3000);
  });

  it('reads an HTTP date, relative to now, never negative', () => {
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now), 0);
  });

  it('ignores what it cannot read', () => {
    for (const value of [undefined, '', 'soon', '-5', '1e3', '12:00'])
      assert.equal(parseRetryAfter(value, now), undefined);
  });
});

describe('retry delay', () => {
  const base = { minMs: 100, maxMs: 1000, maxRetryWaitMs: 5000 };

  it('doubles per retry, with jitter in the upper half, up to the maximum', () => {
    assert.equal(retryDelayMs({ ...base, retry: 0, random: 0 }), 50);
    assert.equal(retryDelayMs({ ...base, retry: 0, random: 0.999999 }), 100);
    assert.equal(retryDelayMs({ ...base, retry: 1, random: 0 }), 100);
    assert.equal(retryDelayMs({ ...base, retry: 2, random: 0.5 }), 300);
    assert.equal(retryDelayMs({ ...base, retry: 10, random: 0.999999 }), 1000);
    assert.equal(retryDelayMs({ ...base, retry: 60, random: 0.5 }), 750);
  });

  it('varies between callers', () => {
    const delays = new Set(Array.from({ length: 20 }, () => retryDelayMs({ ...base, retry: 3 })));
    assert.ok(delays.size > 1);
  });

  it('waits as long as Retry-After asks when that is longer, up to the cap', () => {
    assert.equal(retryDelayMs({ ...base, retry: 0, random: 0, retryAfterMs: 1000 }), 1000);
    assert.equal(retryDelayMs({ ...base, retry: 5, random: 0.999999, retryAfterMs: 10 }), 1000);
    assert.equal(retryDelayMs({ ...base, retry: 0, random: 0, retryAfterMs: 3_600_000 }), 5000);
  });
});
