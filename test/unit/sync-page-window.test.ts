import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { TxPage } from '../../src/domain/model.js';
import { createPageWindow } from '../../src/sync/walk/page-window.js';
import { makeTx } from './sync-fakes.js';

/** A fetch whose answers the test gives by hand, page by page. */
class ManualFetch {
  readonly requested: number[] = [];
  private readonly waiting = new Map<number, { resolve(page: TxPage): void; reject(error: unknown): void }>();

  readonly fetchPage = (page: number): Promise<TxPage> => {
    this.requested.push(page);
    return new Promise((resolve, reject) => this.waiting.set(page, { resolve, reject }));
  };

  /** Answers page `page` with records `rawIds` (newest first), then lets the window react. */
  async answer(page: number, rawIds: number[]): Promise<void> {
    this.waiting.get(page)?.resolve({
      currentPage: page,
      totalPages: 100,
      txs: rawIds.map((id) => makeTx(id)),
      rejected: [],
    });
    this.waiting.delete(page);
    await settle();
  }

  async fail(page: number, error: unknown): Promise<void> {
    this.waiting.get(page)?.reject(error);
    this.waiting.delete(page);
    await settle();
  }

  get unanswered(): number {
    return this.waiting.size;
  }
}

/** Lets every promise callback already due run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));
/** Page `p` of a 1000-record list with consecutive rawIds: 1000..991 on page 1, and so on. */
const idsOf = (p: number) => Array.from({ length: 10 }, (_, i) => 1000 - (p - 1) * 10 - i);

function windowOver(fetch: ManualFetch, maxWidth: number, last = 100) {
  const where = { next: 1, last };
  const window = createPageWindow({ fetchPage: fetch.fetchPage, maxWidth, bounds: () => where });
  return { window, where };
}

describe('page window', () => {
  it('starts one page wide: only the next page is requested until pages are accepted', async () => {
    const fetch = new ManualFetch();
    const { window, where } = windowOver(fetch, 4);
    window.fill();
    window.fill();
    assert.deepEqual(fetch.requested, [1], 'a page on its way is not requested twice');
    assert.equal(window.state(1), 'pending');
    await fetch.answer(1, idsOf(1));
    assert.equal(window.state(1), 'arrived');
    const fetched = await window.take(1);
    assert.equal(fetched.ordered, true);
    assert.ok(fetched.outcome.ok);
    assert.equal(window.state(1), 'absent', 'a taken page is forgotten');
    assert.deepEqual(fetch.requested, [1], 'nothing requested ahead while one page wide');
    window.accepted();
    where.next = 2;
    assert.equal(window.width, 2);
    window.fill();
    assert.deepEqual(fetch.requested, [1, 2, 3]);
  });

  it('widens with each accepted page up to its most, and never has more requests unanswered', async () => {
    const fetch = new ManualFetch();
    const { window, where } = windowOver(fetch, 4);
    for (let i = 0; i < 5; i++) window.accepted();
    assert.equal(window.width, 4);
    where.next = 6;
    window.fill();
    assert.deepEqual(fetch.requested, [6, 7, 8, 9]);
    assert.equal(fetch.unanswered, 4);
    // As answers come in, pages further ahead are requested, up to twice the width past the next.
    await fetch.answer(7, idsOf(7));
    await fetch.answer(8, idsOf(8));
    assert.deepEqual(fetch.requested, [6, 7, 8, 9, 10, 11]);
    await fetch.answer(9, idsOf(9));
    await fetch.answer(10, idsOf(10));
    await fetch.answer(11, idsOf(11));
    assert.deepEqual(fetch.requested, [6, 7, 8, 9, 10, 11, 12, 13], 'pages 6..13 at most');
    assert.ok(fetch.unanswered <= 4);
    const ahead = await window.take(7);
    assert.equal(ahead.ordered, false, 'requested before page 6 was accepted');
  });

  it('follows a most read as it goes: wider as it grows, narrower at once as it shrinks', async () => {
    const fetch = new ManualFetch();
    let most = 2;
    const where = { next: 1, last: 100 };
    const window = createPageWindow({
      fetchPage: fetch.fetchPage,
      maxWidth: () => most,
      bounds: () => where,
    });
    for (let i = 0; i < 5; i++) window.accepted();
    assert.equal(window.width, 2);
    most = 8;
    for (let i = 0; i < 3; i++) window.accepted();
    assert.equal(window.width, 8);
    most = 3;
    window.fill();
    assert.equal(fetch.unanswered, 3, 'no more requests than the most now allows');
    assert.equal(window.width, 3);
  });

  it('requests nothing past the last page worth requesting', async () => {
    const fetch = new ManualFetch();
    const { window, where } = windowOver(fetch, 8, 3);
    for (let i = 0; i < 5; i++) window.accepted();
    where.next = 2;
    window.fill();
    assert.deepEqual(fetch.requested, [2, 3]);
  });

  it('narrows to one page when links fetched out of order are rarely proven, and widens again later', () => {
    const fetch = new ManualFetch();
    const { window } = windowOver(fetch, 4);
    for (let i = 0; i < 3; i++) window.accepted();
    assert.equal(window.width, 4);
    for (let i = 0; i < 6; i++) window.recordLink(false);
    window.recordLink(true);
    assert.equal(window.width, 4, 'six unproven links in the last sixteen are tolerated');
    window.recordLink(false);
    assert.equal(window.width, 1, 'the seventh narrows the window');
    for (let i = 0; i < 16; i++) window.accepted();
    assert.equal(window.width, 1, 'one page at a time for sixteen pages');
    window.accepted();
    assert.equal(window.width, 2);
  });

  it('keeps the pages ahead that prove their links against a page fetched again, drops the rest', async () => {
    const fetch = new ManualFetch();
    const { window, where } = windowOver(fetch, 4);
    for (let i = 0; i < 5; i++) window.accepted();
    where.next = 2;
    window.fill();
    assert.deepEqual(fetch.requested, [2, 3, 4, 5]);
    await fetch.answer(3, idsOf(3));
    await fetch.answer(4, [970, 968, 966]);
    await fetch.answer(5, [950, 949]);
    // Page 2 came back with records 990..981, which page 3 (980..971) joins; page 4 (970..966)
    // joins page 3; page 5 starts at 950, far below 966: unproven, dropped from there on.
    window.dropUnprovenAhead(2, 981);
    assert.equal(window.state(3), 'arrived');
    assert.equal(window.state(4), 'arrived');
    assert.equal(window.state(5), 'absent');
  });

  it('keeps a failed fetch as an answer, and refuses a page never requested', async () => {
    const fetch = new ManualFetch();
    const { window } = windowOver(fetch, 1);
    window.fill();
    await fetch.fail(1, new Error('HTTP 503'));
    const fetched = await window.take(1);
    assert.equal(fetched.outcome.ok, false);
    await assert.rejects(window.take(7), /never requested/);
  });

  it('requests nothing once closed', async () => {
    const fetch = new ManualFetch();
    const { window, where } = windowOver(fetch, 4);
    for (let i = 0; i < 3; i++) window.accepted();
    window.fill();
    window.close();
    await fetch.answer(1, idsOf(1));
    where.next = 2;
    window.fill();
    assert.deepEqual(fetch.requested, [1, 2, 3, 4]);
    assert.equal(window.state(1), 'absent');
  });
});
