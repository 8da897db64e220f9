/**
 * Positions in commit order: writers that commit out of order (a long transaction takes its ids
 * first and commits last) never make a reader who saw position P later find an event below P, and
 * the feed holds exactly what committed: nothing rolled back, nothing missed, nothing twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Db } from '../../src/db/drizzle-db.js';
import { queryRows } from '../../src/db/rows.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { readFeedPage, stampFeed } from '../../src/feed/feed-store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows } from '../helpers/feed.js';
import { withSeed } from '../helpers/seed.js';

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
});
after(async () => {
  await testDb?.drop();
});

/** Reads the feed after `position` to its end; asserts positions only grow. */
async function readAll(position: number): Promise<{ events: FeedEvent[]; position: number }> {
  const events: FeedEvent[] = [];
  for (;;) {
    const page = await readFeedPage(testDb.database, { after: position, limit: 100 });
    assert.equal(page.kind, 'events');
    if (page.kind !== 'events') throw new Error('unreachable');
    for (const event of page.events) {
      assert.ok(event.position > position, `position ${event.position} after ${position}`);
      position = event.position;
    }
    events.push(...page.events);
    if (page.events.length === 0) return { events, position };
  }
}

/** Runs `fn` inside a transaction held on a connection of its own until `fn` resolves. */
function inTransaction(fn: (db: Db) => Promise<'commit' | 'rollback'>): Promise<void> {
  return testDb.database.withConnection(async (db) => {
    await db.execute(sql`BEGIN`);
    try {
      const end = await fn(db);
      await db.execute(end === 'commit' ? sql`COMMIT` : sql`ROLLBACK`);
    } catch (error) {
      await db.execute(sql`ROLLBACK`).catch(() => undefined);
      throw error;
    }
  });
}

describe('positions in commit order', () => {
  it('gives a long transaction that commits last positions above a shorter one that committed first', async () => {
    const start = (await readAll(0)).position;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begun!: () => void;
    const wrote = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const long = inTransaction(async (db) => {
      await insertRows(db, [{ rawId: 1 }]);
      begun();
      await held;
      await insertRows(db, [{ rawId: 3 }]);
      return 'commit';
    });
    await wrote;
    await insertRows(testDb.database.db, [{ rawId: 2 }]);
    await stampFeed(testDb.database);
    const first = await readAll(start);
    assert.deepEqual(
      first.events.map((e) => e.rawId),
      [2],
      'the committed one only',
    );
    release();
    await long;
    await stampFeed(testDb.database);
    const next = await readAll(first.position);
    assert.deepEqual(
      next.events.map((e) => e.rawId),
      [1, 3],
      'the long one, above what was seen',
    );
    // What a feed keyed by the events' own serial ids would have done: rawId 1 took the lower id,
    // below the one the reader had seen, and would never have been read.
    const ids = await queryRows<{ raw_id: string; id: string }>(
      testDb.database.db,
      sql`SELECT raw_id::text, id::text FROM ledger_feed_events WHERE raw_id IN (1, 2) ORDER BY raw_id`,
    );
    assert.ok(Number(ids[0]?.id) < Number(ids[1]?.id), 'the long transaction took the lower event id');
  });

  it('holds exactly what committed, positions only growing, with two writers, two stampers and a reader', () =>
    withSeed(async (rng) => {
      const random = () => rng.next();
      const stored = new Set<number>();
      const changed = new Map<number, number>();
      const rolledBack = new Set<number>();
      let nextRawId = 1000;
      let running = true;
      const writer = async (name: string) => {
        const mine: number[] = [];
        while (running) {
          const rawIds = Array.from({ length: 1 + Math.floor(random() * 40) }, () => nextRawId++);
          const update = mine.filter(() => random() < 0.2);
          const commit = random() > 0.15;
          await inTransaction(async (db) => {
            await insertRows(
              db,
              rawIds.map((rawId) => ({ rawId, from: name })),
            );
            if (update.length > 0) {
              await db.execute(sql`UPDATE ledger_transactions SET status = 'packaged'
              WHERE raw_id = ANY (${`{${update.join(',')}}`}::bigint[]) AND status <> 'packaged'`);
            }
            // Held while the other writer commits.
            await new Promise((resolve) => setTimeout(resolve, random() * 60));
            return commit ? 'commit' : 'rollback';
          });
          if (!commit) {
            for (const rawId of rawIds) rolledBack.add(rawId);
            continue;
          }
          for (const rawId of rawIds) stored.add(rawId);
          for (const rawId of update) if (!changed.has(rawId)) changed.set(rawId, 1);
          mine.push(...rawIds);
        }
      };
      const stamper = async () => {
        while (running) {
          await stampFeed(testDb.database);
          await new Promise((resolve) => setTimeout(resolve, random() * 15));
        }
      };
      const seen: FeedEvent[] = [];
      let position = (await readAll(0)).position;
      const reader = async () => {
        while (running) {
          const page = await readFeedPage(testDb.database, {
            after: position,
            limit: 1 + Math.floor(random() * 50),
          });
          assert.equal(page.kind, 'events');
          if (page.kind !== 'events') return;
          for (const event of page.events) {
            assert.ok(
              event.position > position,
              `never below a position seen: ${event.position} after ${position}`,
            );
            position = event.position;
            seen.push(event);
          }
          await new Promise((resolve) => setTimeout(resolve, random() * 10));
        }
      };
      const all = Promise.all([writer('w1'), writer('w2'), stamper(), stamper(), reader()]);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      running = false;
      await all;
      await stampFeed(testDb.database);
      seen.push(...(await readAll(position)).events);

      const storedSeen = seen.filter((e) => e.kind === 'stored').map((e) => e.rawId);
      const changedSeen = seen.filter((e) => e.kind === 'changed').map((e) => e.rawId);
      assert.ok(
        stored.size > 100 && rolledBack.size > 0 && changed.size > 0,
        'the writers wrote, rolled back and changed',
      );
      assert.equal(new Set(storedSeen).size, storedSeen.length, 'each record stored once');
      assert.deepEqual(
        [...storedSeen].sort((a, b) => a - b),
        [...stored].sort((a, b) => a - b),
        'every committed record, and only those',
      );
      assert.deepEqual(
        [...changedSeen].sort((a, b) => a - b),
        [...changed.keys()].sort((a, b) => a - b),
        'every committed change, once',
      );
      for (const rawId of rolledBack)
        assert.ok(!storedSeen.includes(rawId), `rolled back ${rawId} is not in the feed`);
    }));
});
