import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnrecoverableError } from 'bullmq';
import { parseDuration } from '../../src/cli/commands/schedule.js';
import { ConfigError, HttpError, LeaseLostError, NetworkError, UsageError } from '../../src/errors.js';
import { jobFailure, throttlePauseMs } from '../../src/queue/job-errors.js';
import { parseJobPayload } from '../../src/queue/jobs.js';
import { wantedSchedules } from '../../src/queue/schedules.js';
import { plannedStart } from '../../src/queue/worker-deps.js';

describe('job payloads', () => {
  it('refuses a stream whose account is too long or holds a line break', () => {
    for (const account of ['0x'.padEnd(200, 'a'), '0xabc\n']) {
      assert.throws(
        () => parseJobPayload('sync-stream', { stream: { account } }),
        (error: unknown) => error instanceof UsageError && /stream\.account must/.test(error.message),
      );
    }
    assert.deepEqual(parseJobPayload('sync-stream', { stream: { account: 'eid42' } }).stream, {
      account: 'eid42',
    });
  });

  it('reads a range job and keeps what a retry needs to resume', () => {
    const payload = parseJobPayload('backfill-range', {
      stream: {},
      backfillId: 'b1',
      fromPage: 9,
      toPage: null,
      stopBelowRawId: 120,
      seekRawId: 131,
      previousLow: 140,
    });
    assert.deepEqual(payload, {
      stream: {},
      backfillId: 'b1',
      fromPage: 9,
      toPage: null,
      stopBelowRawId: 120,
      seekRawId: 131,
      previousLow: 140,
    });
  });

  it('refuses a payload of the wrong shape with a message naming the field', () => {
    assert.throws(
      () => parseJobPayload('backfill-range', { stream: {}, backfillId: 'b', fromPage: 0 }),
      /fromPage/,
    );
    assert.throws(() => parseJobPayload('sync-stream', { stream: { account: 7 } }), /stream\.account/);
    assert.throws(() => parseJobPayload('sync-stream', null), UsageError);
  });

  it('fills the defaults of optional fields', () => {
    assert.deepEqual(parseJobPayload('reconcile', {}), { limit: 500, lists: false, overdueMs: 0 });
    assert.deepEqual(parseJobPayload('sync-stream', { stream: { account: 'eid1', action: null } }), {
      stream: { account: 'eid1' },
    });
  });
});

describe('job failures', () => {
  it('a non-retryable error ends the job; a transient one is retried', () => {
    assert.ok(jobFailure(new ConfigError('X', 'bad')) instanceof UnrecoverableError);
    assert.ok(jobFailure(new HttpError({ status: 400, body: '', url: 'u' })) instanceof UnrecoverableError);
    const network = new NetworkError('u', 'reset');
    assert.equal(jobFailure(network), network);
    const unknown = new Error('connection terminated');
    assert.equal(jobFailure(unknown), unknown, 'infrastructure failures are retried');
    const lease = new LeaseLostError('txs', 'held');
    assert.equal(jobFailure(lease), lease);
  });

  it('a 429 asks for a pause of its Retry-After, or the fallback without one', () => {
    assert.equal(
      throttlePauseMs(new HttpError({ status: 429, body: '', url: 'u', retryAfterMs: 3000 }), 5000),
      3000,
    );
    assert.equal(throttlePauseMs(new HttpError({ status: 429, body: '', url: 'u' }), 5000), 5000);
    assert.equal(throttlePauseMs(new HttpError({ status: 503, body: '', url: 'u' }), 5000), null);
  });
});

describe('schedule periods', () => {
  it('reads seconds, minutes, hours and milliseconds', () => {
    assert.equal(parseDuration('30s'), 30_000);
    assert.equal(parseDuration('5m'), 300_000);
    assert.equal(parseDuration('1h'), 3_600_000);
    assert.equal(parseDuration('1500'), 1500);
    assert.throws(() => parseDuration('soon'), /--every/);
    assert.throws(() => parseDuration('10ms'), /at least 1s/);
  });
});

describe('re-read schedule', () => {
  it('re-reads through list pages only when the global list is among the streams kept in sync', () => {
    const reconcileData = (streams: Parameters<typeof wantedSchedules>[0]['streams']) =>
      wantedSchedules({ everyMs: 1000, streams }).find((s) => s.id === 'reconcile')?.data;
    assert.deepEqual(reconcileData([]), { limit: 500, lists: true, overdueMs: 3000 });
    assert.deepEqual(reconcileData([{ account: '0xabc' }, {}]), { limit: 500, lists: true, overdueMs: 3000 });
    assert.deepEqual(reconcileData([{ account: '0xabc' }]), { limit: 500, lists: false });
    assert.deepEqual(reconcileData([{ action: 'burn' }]), { limit: 500, lists: false });
  });
});

describe('plannedStart', () => {
  const job = { name: 'sync-stream', data: {}, attemptsMade: 0, updateData: async () => {} };

  it("takes a scheduler's planned time, not the time the job was picked up", () => {
    // A scheduler adds the next run when this one starts, delayed to its planned time.
    const planned = plannedStart({ ...job, timestamp: 10_000, opts: { delay: 990 } }, 11_030);
    assert.equal(planned.getTime(), 10_990);
  });

  it('is now for a job without a timestamp, and never later than now', () => {
    assert.equal(plannedStart(job, 5_000).getTime(), 5_000);
    assert.equal(
      plannedStart({ ...job, timestamp: 9_000, opts: { delay: 2_000 } }, 10_000).getTime(),
      10_000,
    );
  });
});
