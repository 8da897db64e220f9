import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { knownHead, lagRawIds } from '../../src/app/status/stream-head.js';
import { minuteAt, statusStream } from '../helpers/stream-status.js';

const at = minuteAt;
const stream = statusStream;

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
