import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lagsOf, type ReflectedChange, type TruthChange } from '../../bench/status-lags.js';

describe('status freshness lags', () => {
  const change = (rawId: number, packagedAtMs: number | null, targetLandedAtMs: number | null = null) =>
    ({ rawId, burn: targetLandedAtMs !== null, packagedAtMs, targetLandedAtMs }) satisfies TruthChange;

  it('measures each change from when it happened to when its row showed it, per kind and overall', () => {
    const changes = [change(1, 1_000), change(2, 1_000, 5_000), change(3, 2_000)];
    const rows = new Map<number, ReflectedChange>([
      [1, { packagedMs: 1_500, targetMs: null }],
      [2, { packagedMs: 3_000, targetMs: 5_400 }],
      [3, { packagedMs: 2_100, targetMs: null }],
    ]);
    const lags = lagsOf(changes, rows);
    assert.deepEqual(lags.packaged, { changes: 3, missed: 0, p50: 500, p95: 2_000, max: 2_000 });
    assert.deepEqual(lags.targetHash, { changes: 1, missed: 0, p50: 400, p95: 400, max: 400 });
    assert.deepEqual(lags.all, { changes: 4, missed: 0, p50: 400, p95: 2_000, max: 2_000 });
  });

  it('counts a change never shown (or a record never stored) as missed, and one not happened yet not at all', () => {
    const changes = [change(1, 1_000, 9_000), change(2, null), change(3, 1_000)];
    const rows = new Map<number, ReflectedChange>([[1, { packagedMs: 1_200, targetMs: null }]]);
    const lags = lagsOf(changes, rows);
    assert.deepEqual(lags.packaged, { changes: 2, missed: 1, p50: 200, p95: 200, max: 200 });
    assert.equal(lags.targetHash.changes, 1);
    assert.equal(lags.targetHash.missed, 1);
    assert.ok(Number.isNaN(lags.targetHash.p95), 'no lag to rank');
    assert.deepEqual([lags.all.changes, lags.all.missed], [3, 2]);
  });
});
