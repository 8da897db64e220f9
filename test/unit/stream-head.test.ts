import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { knownHead, lagRawIds } from '../../src/app/stream-head.js';
import type { SyncStatus } from '../../src/db/status.js';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 25, 12, minute));

function stream(overrides: Partial<SyncStatus['streams'][number]> = {}): SyncStatus['streams'][number] {
  return {
    key: 'txs',
    spec: {},
    watermark: 500,
    walk: null,
    leaseOwner: null,
    leaseFence: 3,
    leaseExpiresAt: null,
    lastSuccessAt: at(30),
    lastErrorAt: null,
    lastError: null,
    errorStreak: 0,
    headRawId: 500,
    headSeenAt: at(30),
    backfilledAt: at(10),
    rejected: 0,
    nonFinal: 0,
    conflicts: 0,
    ...overrides,
  };
}

describe('the lag: the head last seen at the service minus the watermark', () => {
  it('takes the newest head seen, with the time it was seen', () => {
    const live = { rawId: 530, seenAt: at(40) };
    assert.deepEqual(knownHead(stream(), { live }), live);
    assert.deepEqual(knownHead(stream(), { live: { rawId: 480, seenAt: at(40) } }), {
      rawId: 500,
      seenAt: at(30),
    });
    assert.deepEqual(knownHead(stream(), { live: { rawId: 500, seenAt: at(40) } }), {
      rawId: 500,
      seenAt: at(40),
    });
    // A walk begun before heads were stored: its head, seen at an unknown time.
    const walk = { mode: 'tail' as const, nextPage: 2, headRawId: 520, totalPages: 60 };
    assert.deepEqual(knownHead(stream({ headRawId: null, headSeenAt: null, walk })), {
      rawId: 520,
      seenAt: null,
    });
  });

  it('counts every rawId up to the head without a watermark, never below 0, and nothing without a head', () => {
    assert.equal(lagRawIds(530, 500), 30);
    assert.equal(lagRawIds(499, 500), 0);
    assert.equal(lagRawIds(9, null), 10);
    assert.equal(lagRawIds(null, 500), null);
  });
});
