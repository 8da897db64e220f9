import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { TxPage } from '../../src/domain/model.js';
import { judgePage } from '../../src/sync/walk/judge-page.js';
import { makeTx } from './sync-fakes.js';

/** A page of a newest-first list holding the given rawIds. */
function page(rawIds: number[], totalPages = 9): TxPage {
  return { currentPage: 1, totalPages, txs: rawIds.map((id) => makeTx(id)), rejected: [] };
}

describe('judgePage', () => {
  it('accepts a page fetched in order without checking its link', () => {
    const served = page([50, 49, 48]);
    const judged = judgePage({ page: 3, served, ordered: true, totalPages: 9, previousMin: 80 });
    assert.deepEqual(judged, { verdict: 'accept', link: null });
  });

  it('accepts a page fetched out of order that overlaps or joins its predecessor', () => {
    const base = { page: 3, ordered: false, totalPages: 9 };
    assert.deepEqual(judgePage({ ...base, served: page([61, 60, 59]), previousMin: 60 }), {
      verdict: 'accept',
      link: 'overlap',
    });
    assert.deepEqual(judgePage({ ...base, served: page([59, 58, 57]), previousMin: 60 }), {
      verdict: 'accept',
      link: 'join',
    });
  });

  it('fetches again a page fetched out of order whose link to its predecessor is unproven', () => {
    const base = { page: 3, ordered: false, totalPages: 9 };
    // Records 58 and 59 may have slipped between the two pages.
    assert.deepEqual(judgePage({ ...base, served: page([57, 56]), previousMin: 60 }), {
      verdict: 'fetch-again',
      link: 'unproven',
    });
    // Nothing is known of the predecessor's records.
    assert.deepEqual(judgePage({ ...base, served: page([57, 56]), previousMin: null }), {
      verdict: 'fetch-again',
      link: 'unproven',
    });
  });

  it('counts a rejected record with a readable rawId towards the link', () => {
    const served: TxPage = {
      ...page([58]),
      rejected: [{ reason: 'amount is not decimal digits', raw: '{"rawId":59}', rawId: 59 }],
    };
    assert.equal(
      judgePage({ page: 3, served, ordered: false, totalPages: 9, previousMin: 60 }).verdict,
      'accept',
    );
  });

  it('retries an empty page before the last page, whether the walk or the page says so', () => {
    const empty = page([], 9);
    assert.deepEqual(judgePage({ page: 9, served: empty, ordered: true, totalPages: 3, previousMin: 60 }), {
      verdict: 'empty-retry',
      link: null,
      totalPages: 9,
    });
    // The list shrank on the service, but the walk has seen it reach page 12.
    assert.deepEqual(
      judgePage({ page: 11, served: page([], 4), ordered: false, totalPages: 12, previousMin: 60 }),
      { verdict: 'empty-retry', link: null, totalPages: 12 },
    );
  });

  it('accepts an empty page past the last page: the end of the list', () => {
    const judged = judgePage({ page: 10, served: page([], 9), ordered: true, totalPages: 9, previousMin: 3 });
    assert.deepEqual(judged, { verdict: 'accept', link: null });
  });
});
