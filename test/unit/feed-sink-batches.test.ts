import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { batchBody, batchesOf, retryDelayMs } from '../../src/feed/sinks/sink-batches.js';

function event(position: number, action = 'transfer', status = 'confirmed'): FeedEvent {
  return {
    kind: 'stored',
    position,
    rawId: position,
    action,
    tokenTag: 'ethereum-usdc-0xa0b8',
    from: 'alice',
    to: 'bob',
    stampedAt: '2026-01-01T00:00:00.000Z',
    fields: {
      status,
      internalStatus: '',
      targetChainTxHash: '',
      express: { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' },
    },
  };
}

const positions = (events: readonly FeedEvent[]) => events.map((e) => e.position);
const loose = { maxEvents: 1000, maxBytes: 1 << 30 };

describe('batchesOf', () => {
  it('cuts a page into batches of at most maxEvents, the last one ending at the page end', () => {
    const page = { events: [1, 2, 3, 4, 5, 6, 7].map((p) => event(p)), position: 9 };
    const batches = batchesOf(page, { filter: {}, bounds: { maxEvents: 3, maxBytes: 1 << 20 }, sink: 's' });
    assert.deepEqual(
      batches.map((b) => [positions(b.events), b.through]),
      [
        [[1, 2, 3], 3],
        [[4, 5, 6], 6],
        [[7], 9],
      ],
    );
  });

  it('keeps each body within maxBytes, an event too big for it alone in its batch', () => {
    const small = [1, 2, 3, 4].map((p) => event(p));
    const big = { ...event(5), fields: { ...event(5).fields, status: 'x'.repeat(3000) } } as FeedEvent;
    const page = { events: [...small, big, event(6)], position: 6 };
    // Room for two small events and the positions' digits, not for three.
    const maxBytes = Buffer.byteLength(batchBody('s', small.slice(0, 2))) + 40;
    const batches = batchesOf(page, { filter: {}, bounds: { maxEvents: 100, maxBytes }, sink: 's' });
    assert.deepEqual(
      batches.map((b) => positions(b.events)),
      [[1, 2], [3, 4], [5], [6]],
    );
    for (const batch of batches.filter((b) => b.events.length > 1)) {
      assert.ok(Buffer.byteLength(batchBody('s', batch.events)) <= maxBytes);
    }
  });

  it('leaves out what the filter does not let through, and passes a page with nothing that does', () => {
    const page = { events: [event(1, 'burn'), event(2), event(3, 'burn'), event(4)], position: 4 };
    const burns = batchesOf(page, { filter: { action: 'burn' }, bounds: loose, sink: 's' });
    assert.deepEqual(
      burns.map((b) => [positions(b.events), b.through]),
      [[[1, 3], 4]],
    );
    const mints = batchesOf(page, { filter: { action: 'mint' }, bounds: loose, sink: 's' });
    assert.deepEqual(mints, [{ events: [], through: 4 }]);
  });
});

describe('batchBody', () => {
  it('is { sink, first, last, events }', () => {
    const body = JSON.parse(batchBody('hook', [event(7), event(9)]));
    assert.deepEqual(Object.keys(body), ['sink', 'first', 'last', 'events']);
    assert.deepEqual([body.sink, body.first, body.last, body.events.length], ['hook', 7, 9, 2]);
  });
});

describe('retryDelayMs', () => {
  const policy = { tries: 10, minMs: 100, maxMs: 1000 };

  it('doubles its ceiling per retry up to the maximum, drawn from the ceiling’s upper half', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 8].map((retry) => retryDelayMs(retry, policy, { random: 0 })),
      [50, 100, 200, 400, 500, 500],
    );
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((retry) => retryDelayMs(retry, policy, { random: 0.999999 })),
      [100, 200, 400, 800, 1000],
    );
  });

  it('waits as long as a Retry-After asks when that is longer, up to the maximum', () => {
    assert.equal(retryDelayMs(0, policy, { retryAfterMs: 700, random: 0 }), 700);
    assert.equal(retryDelayMs(0, policy, { retryAfterMs: 60_000, random: 0 }), 1000);
    assert.equal(retryDelayMs(3, policy, { retryAfterMs: 10, random: 0 }), 400);
  });
});
