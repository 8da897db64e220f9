/**
 * Settling a span by its gaps: the pages that show each gap, and when they show it closed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TxPage } from '../../src/domain/model.js';
import { gapPages, gapShown, proveGaps, type ReadPage } from '../../src/sync/walk/gap-proof.js';
import { makeTx } from './sync-fakes.js';

/** A page by page number listing `ids` (newest first). */
const page = (ids: number[], rejected: TxPage['rejected'] = []): TxPage => ({
  currentPage: 1,
  totalPages: 100,
  txs: ids.map((id) => makeTx(id)),
  rejected,
});
const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

describe('the pages that show a gap', () => {
  it('is the page of its upper record, moved by the records found above, and the next one near its end', () => {
    assert.deepEqual(gapPages([{ above: 50, below: 48, rank: 11 }], 5), [2], 'rank 16: seventh of page 2');
    assert.deepEqual(
      gapPages([{ above: 50, below: 48, rank: 12 }], 5),
      [2, 3],
      'rank 17: arrivals may push it over',
    );
    assert.deepEqual(gapPages([{ above: 50, below: 48, rank: 14 }], 5), [2, 3], 'rank 19: last of page 2');
    assert.deepEqual(
      gapPages(
        [
          { above: 90, below: 80, rank: 1 },
          { above: 50, below: 48, rank: 4 },
        ],
        0,
      ),
      [1],
      'one page for both',
    );
    assert.equal(
      gapPages(
        [1, 2, 3].map((i) => ({ above: 100 - i * 30, below: 90 - i * 30, rank: i * 30 })),
        0,
        2,
      ),
      null,
    );
  });
});

describe('a gap shown closed', () => {
  const gap = { above: 50, below: 48, rank: 0 };
  it('by one page with its two records, side by side or with the records shown late between them', () => {
    assert.equal(gapShown([{ page: 1, served: page([53, 52, 51, 50, 48, 47]) }], gap), true);
    assert.equal(
      gapShown([{ page: 1, served: page([53, 52, 51, 50, 49, 48]) }], gap),
      true,
      'a record shown late in it, stored with the page',
    );
    assert.equal(
      gapShown([{ page: 1, served: page([53, 52, 51, 50, 47]) }], gap),
      false,
      'the lower record not listed',
    );
    assert.equal(gapShown([{ page: 1, served: page([47, 46]) }], gap), false, 'not on the page');
    assert.equal(
      gapShown([{ page: 1, served: page([51, 50, 48], [{ rawId: 49, reason: 'bad', raw: '{}' }]) }], gap),
      false,
      'a record set aside in it',
    );
  });

  it('by a full page with the upper record and the next page, read after it and sharing no record, with the lower', () => {
    const ending: ReadPage = { page: 3, served: page(range(59, 50)) };
    assert.equal(gapShown([ending, { page: 4, served: page([48, 47]) }], gap), true);
    assert.equal(gapShown([ending, { page: 4, served: page([49, 48]) }], gap), true, 'one shown late');
    assert.equal(
      gapShown([ending, { page: 4, served: page([50, 48]) }], gap),
      false,
      'the list moved between the two reads',
    );
    assert.equal(gapShown([ending, { page: 5, served: page([48, 47]) }], gap), false, 'not the next page');
    assert.equal(gapShown([ending], gap), false);
    assert.equal(
      gapShown(
        [
          { page: 3, served: page(range(58, 50)) },
          { page: 4, served: page([48]) },
        ],
        gap,
      ),
      false,
      'a page of nine may have set one aside',
    );
  });

  it('reads only the pages the walk did not show it on, and proves nothing when a page fails', async () => {
    const asked: number[] = [];
    const fetchPage = async (n: number) => {
      asked.push(n);
      if (n === 9) throw new Error('down');
      return page(range(100 - (n - 1) * 10, 91 - (n - 1) * 10).filter((id) => id !== 55));
    };
    const hole = { above: 56, below: 54, rank: 44 };
    const seen = [page([99, 98, 97, 95])];
    const both = await proveGaps({
      gaps: [{ above: 97, below: 95, rank: 3 }, hole],
      newRecords: 0,
      seen,
      fetchPage,
    });
    assert.equal(both.proven, true);
    assert.deepEqual(
      both.read.map((r) => r.page),
      [5],
      'page 5 only: the walk showed the other gap',
    );
    assert.deepEqual(asked, [5]);
    const failed = await proveGaps({ gaps: [{ ...hole, rank: 84 }], newRecords: 0, seen: [], fetchPage });
    assert.deepEqual(failed, { proven: false, read: [] });
  });
});
