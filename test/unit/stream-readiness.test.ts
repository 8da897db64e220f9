import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backfillProgress, notReadyReasons } from '../../src/app/status/stream-health.js';
import type { StreamFacts } from '../../src/db/queries/stream-facts.js';
import type { VerifyRun } from '../../src/db/queries/verify-runs.js';
import { minuteAt, statusStream } from '../helpers/stream-status.js';

const at = minuteAt;
const stream = statusStream;

function verify(startMinute: number, incomplete: string[]): VerifyRun {
  return {
    startedAt: at(startMinute),
    finishedAt: at(startMinute + 1),
    complete: incomplete.length === 0,
    summary: {
      streams: 2,
      incompleteStreams: incomplete,
      streamProblems: Object.fromEntries(
        incomplete.map((key) => [key, ['1 unproven gap(s) below the watermark']]),
      ),
      conflicts: 0,
      integrityMismatches: 0,
      balanceDifferences: null,
    },
  };
}

describe('readiness and the latest verify', () => {
  it('is not ready while the latest verify after its backfill found it incomplete, whatever ran since', () => {
    const [reason, ...rest] = notReadyReasons(stream(), undefined, verify(20, ['txs']));
    assert.deepEqual(rest, []);
    assert.equal(
      reason,
      'last verify (finished 2026-11-25T12:21:00.000Z) found it incomplete: 1 unproven gap(s) below the watermark; run verify again once repaired',
    );
  });

  it('is ready when the latest verify found it complete, or found only other streams incomplete', () => {
    assert.deepEqual(notReadyReasons(stream(), undefined, verify(20, [])), []);
    assert.deepEqual(notReadyReasons(stream(), undefined, verify(20, ['account:0xabc'])), []);
  });

  it('ignores a verify that began before the backfill ended, a walk or a parallel backfill', () => {
    assert.deepEqual(notReadyReasons(stream({ backfilledAt: at(25) }), undefined, verify(20, ['txs'])), []);
    const facts: StreamFacts = {
      watermarkTime: null,
      latestBackfill: {
        id: 'b',
        status: 'done',
        floor: null,
        error: null,
        round: 1,
        headRawId: 500,
        finishedAt: at(25),
      },
    };
    assert.deepEqual(notReadyReasons(stream({ backfilledAt: null }), facts, verify(20, ['txs'])), []);
    // A backfill still to come is reason enough on its own.
    assert.deepEqual(
      notReadyReasons(stream({ watermark: null, backfilledAt: null }), undefined, verify(20, ['txs'])),
      ['never completely backfilled (no watermark)'],
    );
  });

  it('is ready while a catch-up of a tail far behind runs, not while a first backfill does', () => {
    const running = (floor: number | null): StreamFacts => ({
      watermarkTime: null,
      latestBackfill: {
        id: 'r',
        status: 'running',
        floor,
        error: null,
        round: 0,
        headRawId: 1000,
        finishedAt: null,
      },
    });
    assert.deepEqual(notReadyReasons(stream(), running(600)), []);
    assert.deepEqual(notReadyReasons(stream(), running(null)), [
      'parallel backfill running (completeness check round 0)',
    ]);
    // A catch-up's share done is of the stretch above its floor.
    assert.equal(backfillProgress(stream(), running(600), [{ lo: 601, hi: 800 }]), 200 / 400);
    assert.equal(backfillProgress(stream(), running(null), [{ lo: 0, hi: 499 }]), 500 / 1001);
  });
});
