/**
 * The reader `verify` reads a list by key with (`src/app/verify/key-window.ts`): in order from a
 * cursor to the list's end, far from the head in ranges at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createKeyWindow } from '../../src/app/verify/key-window.js';
import type { LedgerTx, TxKeyPage } from '../../src/domain/model.js';
import { readKeyAfter } from '../../src/sync/key-source.js';
import type { FetchKeyHead, FetchKeyPage } from '../../src/sync/ports/fetches.js';
import { keyWalkScreen } from '../../src/sync/raw-id-screen.js';
import { quietLogger } from '../../src/sync/sync-logger.js';
import { LiveList } from './sync-fakes.js';

const spec = {};

/**
 * The list answered by key after a short wait, as a distant service answers: ascending after the
 * cursor. Counts the requests and the most that were in flight at once.
 */
function distant(list: LiveList, options: { failAt?: (cursor: number) => boolean } = {}) {
  const requests: Array<{ cursor: number; count: number | undefined }> = [];
  let inFlight = 0;
  let most = 0;
  const fetchKeyPage: FetchKeyPage = async (_spec, { cursor, count }) => {
    requests.push({ cursor, count });
    inFlight++;
    most = Math.max(most, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (options.failAt?.(cursor)) throw new Error(`answer after ${cursor} lost`);
      const after = list.records.filter((tx) => tx.rawId > cursor).sort((a, b) => a.rawId - b.rawId);
      const served = after.slice(0, count ?? 100);
      const page: TxKeyPage = {
        txs: structuredClone(served),
        rejected: [],
        hasNextPage: after.length > served.length,
      };
      return page;
    } finally {
      inFlight--;
    }
  };
  const fetchKeyHead: FetchKeyHead = async () => list.records.at(-1)?.rawId ?? null;
  return { fetchKeyPage, fetchKeyHead, requests, most: () => most };
}

/** The window over `key`, from `from`, with `lanes` lanes, as `verify` makes it. */
function windowOver(key: ReturnType<typeof distant>, lanes: number, from = 0) {
  const { fetchKeyPage } = key;
  const screen = keyWalkScreen({ fetchKeyPage, spec, logger: quietLogger });
  const reading = { fetchKeyPage, screen, spec, count: 100 };
  return createKeyWindow({
    from,
    read: async (after, upTo) => ({ served: await readKeyAfter(reading, after ?? 0, upTo), readAt: 0 }),
    settle: { windowMs: 0, headAt: undefined },
    lanes: () => lanes,
    readHead: () => key.fetchKeyHead(spec),
  });
}

/** Every answer until the list ends: the records of each answer's span, and the cursors handed on. */
async function readAll(window: ReturnType<typeof windowOver>) {
  const records: LedgerTx[] = [];
  const cursors: number[] = [];
  try {
    for (;;) {
      const { step, cursor, ends } = await window.next();
      const { lo, hi } = step.proven;
      records.push(...(step.read.served.txs as LedgerTx[]).filter((tx) => tx.rawId >= lo && tx.rawId <= hi));
      cursors.push(cursor);
      if (ends) return { records, cursors };
    }
  } finally {
    window.close();
  }
}

const ids = (records: readonly LedgerTx[]) => records.map((tx) => tx.rawId);
const ascending = (values: readonly number[]) => values.every((v, i) => i === 0 || v >= values[i - 1]!);

describe('the window verify reads a list by key with', () => {
  it('reads the stretch to the head in ranges at once, each record once, in order', async () => {
    const list = new LiveList({ count: 5000 });
    const key = distant(list);
    const { records, cursors } = await readAll(windowOver(key, 6));
    assert.deepEqual(ids(records), ids(list.records));
    assert.ok(key.most() >= 4, `requests in flight at once: ${key.most()}`);
    assert.ok(ascending(cursors), 'answers handed on in the order of the list');
    // Each range's last answer asks no more than its top needs: no answer read twice over.
    const asked = key.requests.reduce((n, r) => n + (r.count ?? 0), 0);
    assert.ok(asked <= 5000 + 100 * 12, `records asked: ${asked}`);
  });

  it('reads one answer at a time with a single lane', async () => {
    const list = new LiveList({ count: 3000 });
    const key = distant(list);
    const { records } = await readAll(windowOver(key, 1));
    assert.equal(key.most(), 1);
    assert.equal(records.length, 3000);
  });

  it('leaves no hole among sparse rawIds and records that arrive while it reads', async () => {
    let n = 0;
    const list = new LiveList({ count: 3000, step: () => 1 + (n++ % 5) * 3 });
    const key = distant(list);
    let arrivals = 0;
    const arriving = {
      ...key,
      fetchKeyPage: (async (s, q) => {
        if (++arrivals % 5 === 0) list.add(7);
        return key.fetchKeyPage(s, q);
      }) as FetchKeyPage,
    };
    const { records } = await readAll(windowOver(arriving, 4));
    assert.ok(key.most() >= 3, `requests in flight at once: ${key.most()}`);
    // What arrived after the last request is for the next read; everything below it is read.
    const top = Math.max(...ids(records));
    assert.deepEqual(ids(records), ids(list.records.filter((tx) => tx.rawId <= top)));
  });

  it('asks where the head is again when records kept arriving while it read', async () => {
    const list = new LiveList({ count: 3000 });
    const key = distant(list);
    let heads = 0;
    let requests = 0;
    const reader = {
      ...key,
      // Thirty answers' worth arrive while the first stretch is read.
      fetchKeyPage: (async (s, q) => {
        if (++requests === 10) list.add(3000);
        return key.fetchKeyPage(s, q);
      }) as FetchKeyPage,
      fetchKeyHead: (async (s) => {
        heads++;
        return key.fetchKeyHead(s);
      }) as FetchKeyHead,
    };
    const { records } = await readAll(windowOver(reader, 6));
    assert.equal(heads, 2, 'the head asked once for each stretch');
    assert.deepEqual(ids(records), ids(list.records));
  });

  it('reads no further ahead of what was taken than twice its lanes in ranges: memory stays bounded', async () => {
    const list = new LiveList({ count: 20_000 });
    const key = distant(list);
    let aheadMost = 0;
    const window = windowOver(key, 2);
    let taken = 0;
    // Taken far slower than the answers come: the window waits rather than read on.
    for (let ends = false; !ends; ) {
      const readTo = Math.max(0, ...key.requests.map((r) => r.cursor));
      aheadMost = Math.max(aheadMost, readTo - taken);
      await new Promise((resolve) => setTimeout(resolve, 3));
      const step = await window.next();
      ({ ends } = step);
      taken = step.cursor;
    }
    window.close();
    assert.equal(taken, 20_000);
    // Two lanes: at most four ranges of eight answers read ahead, and the answer taken.
    assert.ok(aheadMost <= (2 * 2 + 1) * 8 * 100 + 100, `read ahead: ${aheadMost} rawIds`);
  });

  it('fails at a lost answer, having handed on only what lies below it, in order', async () => {
    const list = new LiveList({ count: 4000 });
    // An answer in the middle of the stretch fails every time it is asked.
    const key = distant(list, { failAt: (cursor) => cursor >= 2000 && cursor < 2100 });
    const handed: number[] = [];
    const window = windowOver(key, 6);
    await assert.rejects(
      (async () => {
        for (;;) {
          const { step, ends } = await window.next();
          handed.push(...step.read.served.txs.map((tx) => tx.rawId).filter((id) => id <= step.proven.hi));
          if (ends) return;
        }
      })(),
      /answer after 2\d{3} lost/,
    );
    window.close();
    assert.ok(key.most() >= 4);
    assert.ok(Math.max(...handed) <= 2100, `highest handed on: ${Math.max(...handed)}`);
    assert.deepEqual(
      handed,
      ids(list.records).slice(0, handed.length),
      'the list from its start, without a hole',
    );
  });
});
