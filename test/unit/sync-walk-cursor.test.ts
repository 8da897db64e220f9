import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { TxPage } from '../../src/domain/model.js';
import { afterPage, requestBounds, startCursor } from '../../src/sync/walk/walk-cursor.js';
import { makeTx } from './sync-fakes.js';

const page = (rawIds: number[], totalPages: number): TxPage => ({
  currentPage: 1,
  totalPages,
  txs: rawIds.map((id) => makeTx(id)),
  rejected: [],
});

describe('walk cursor', () => {
  it('starts a backfill on a stream never completed, a tail on one that was, or resumes a walk', () => {
    assert.equal(startCursor({ walk: null, watermark: null }, false).walk.mode, 'backfill');
    assert.equal(startCursor({ walk: null, watermark: 40 }, false).walk.mode, 'tail');
    const walk = { mode: 'tail' as const, nextPage: 4, headRawId: 90, totalPages: 9 };
    assert.deepEqual(startCursor({ walk, watermark: 40 }, false), { walk, previousMin: null });
    assert.deepEqual(startCursor({ walk, watermark: 40 }, true).walk, {
      mode: 'backfill',
      nextPage: 1,
      headRawId: null,
      totalPages: 0,
    });
  });

  it('takes the head from page 1, follows totalPages as it grows, and ends after the last page', () => {
    const start = startCursor({ walk: null, watermark: null }, false);
    const first = afterPage(start, 1, page([30, 29, 28], 2), null);
    assert.deepEqual(first.cursor, {
      walk: { mode: 'backfill', nextPage: 2, headRawId: 30, totalPages: 2 },
      previousMin: 28,
    });
    assert.equal(first.finished, false);
    const grown = afterPage(first.cursor, 2, page([27, 26], 3), null);
    assert.equal(grown.finished, false, 'the list grew to 3 pages meanwhile');
    assert.equal(grown.cursor.walk.headRawId, 30, 'the head stays the one seen on page 1');
    assert.equal(afterPage(grown.cursor, 3, page([25], 3), null).finished, true);
  });

  it('goes on while the walk has seen more pages than a page says, and takes no head past page 1', () => {
    const resumed = {
      walk: { mode: 'backfill' as const, nextPage: 3, headRawId: null, totalPages: 5 },
      previousMin: null,
    };
    const next = afterPage(resumed, 3, page([12, 11], 3), null);
    assert.equal(next.finished, false, 'the list had 5 pages when the walk saw it');
    assert.equal(next.cursor.walk.totalPages, 5);
    assert.equal(next.cursor.walk.headRawId, null, 'only page 1 holds the head of the list');
  });

  it('ends a tail on the page that reaches the watermark', () => {
    const start = startCursor({ walk: null, watermark: 25 }, false);
    const first = afterPage(start, 1, page([30, 29, 28], 9), 25);
    assert.equal(first.finished, false);
    assert.equal(afterPage(first.cursor, 2, page([27, 26, 25], 9), 25).finished, true);
  });

  it('ends a tail on the page whose lowest rawId joins the watermark', () => {
    const start = startCursor({ walk: null, watermark: 25 }, false);
    const first = afterPage(start, 1, page([30, 29, 28], 9), 25);
    assert.equal(afterPage(first.cursor, 2, page([27, 26], 9), 25).finished, true, '26 joins 25');
    assert.equal(afterPage(first.cursor, 2, page([27], 9), 25).finished, false, '26 may be further down');
  });

  it('bounds the pages worth requesting by the pages listed, and a tail by its watermark', () => {
    const backfill = startCursor({ walk: null, watermark: null }, false);
    assert.deepEqual(requestBounds(backfill, null), { next: 1, last: 1 }, 'nothing known yet');
    const walked = afterPage(backfill, 1, page([300, 299], 30), null).cursor;
    assert.deepEqual(requestBounds(walked, null), { next: 2, last: 30 });
    const tail = afterPage(startCursor({ walk: null, watermark: 280 }, false), 1, page([300, 291], 30), 280);
    assert.deepEqual(requestBounds(tail.cursor, 280), { next: 2, last: 2 }, 'at most 20 records above 280');
  });
});
