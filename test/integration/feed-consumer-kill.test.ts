/**
 * A feed consumer killed at random points and started again misses nothing and repeats nothing
 * it had kept: two writers insert and change records throughout, the consumer (a process of its
 * own, `test/helpers/feed-consumer-process.ts`) is killed with SIGKILL over and over while it
 * connects, catches up and follows live, and what it kept equals the whole feed, in order.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import type { HttpSurface } from '../../src/http/server.js';
import { packageRoot } from '../../src/paths.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows } from '../helpers/feed.js';
import { openTestSurface } from '../helpers/http-surface.js';
import { type Rng, withSeed } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';

/** Times the consumer is killed before it is left to finish. */
const KILLS = 12;

let testDb: TestDatabase;
let surface: HttpSurface;
let folder: string;
const stop = new AbortController();

before(async () => {
  testDb = await createTestDatabase();
  surface = await openTestSurface({ testDb, signal: stop.signal });
  folder = mkdtempSync(join(tmpdir(), 'feed-consumer-'));
});
after(async () => {
  stop.abort();
  await surface?.close();
  await testDb?.drop();
  rmSync(folder, { recursive: true, force: true });
});

/** The consumer's process, writing to `file`. */
function startConsumer(file: string): ChildProcess {
  return spawn(
    process.execPath,
    ['--import', 'tsx', join('test', 'helpers', 'feed-consumer-process.ts'), `${surface.url}/feed`, file],
    { cwd: packageRoot, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

/** The consumer's kept lines as `position rawId kind`, a line cut by a kill left out. */
function kept(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').slice(0, -1);
}

/** The whole feed, read by long polls from the beginning to the head. */
async function wholeFeed(): Promise<string[]> {
  const lines: string[] = [];
  for (let after = 0; ; ) {
    const answer = (await (await fetch(`${surface.url}/feed?after=${after}&limit=500`)).json()) as {
      events: FeedEvent[];
      position: number;
      head: number;
    };
    lines.push(...answer.events.map((e) => `${e.position} ${e.rawId} ${e.kind}`));
    if (answer.position >= answer.head) return lines;
    after = answer.position;
  }
}

/** Inserts and changes records until `done`, one short transaction after another. */
async function writer(rng: Rng, rawIds: { next: number }, done: () => boolean): Promise<void> {
  const mine: number[] = [];
  while (!done()) {
    if (mine.length > 0 && rng.chance(0.3)) {
      const changed = Array.from({ length: rng.int(1, 4) }, () => rng.pick(mine));
      await testDb.database.db.execute(
        sql`UPDATE ledger_transactions SET status = ${rng.pick(['packaged', 'failed', 'confirmed'])}
          WHERE raw_id = ANY(${`{${changed.join(',')}}`}::bigint[])`,
      );
    } else {
      const ids = Array.from({ length: rng.int(1, 12) }, () => rawIds.next++);
      await insertRows(
        testDb.database.db,
        ids.map((rawId) => ({ rawId })),
      );
      mine.push(...ids);
    }
    await new Promise((resolve) => setTimeout(resolve, rng.int(0, 15)));
  }
}

describe('a feed consumer killed at random points', () => {
  it('keeps the whole feed once, in order, across a dozen kills while two writers write', () =>
    withSeed(async (rng) => {
      const file = join(folder, 'consumer.log');
      let writing = true;
      const rawIds = { next: 1 };
      const writers = [writer(rng, rawIds, () => !writing), writer(rng, rawIds, () => !writing)];
      for (let kill = 0; kill < KILLS; kill++) {
        const before = kept(file).length;
        const consumer = startConsumer(file);
        const exited = once(consumer, 'exit');
        // Every other kill at any moment from its start (connecting, catching up), the others once
        // it has received again (following live, or still catching up).
        if (kill % 2 === 1) {
          await waitFor('the consumer receiving', () => kept(file).length > before, { everyMs: 5 });
        }
        await new Promise((resolve) => setTimeout(resolve, rng.int(0, 400)));
        consumer.kill('SIGKILL');
        await exited;
      }
      writing = false;
      await Promise.all(writers);
      const feed = await waitFor('every write stamped', async () => {
        const lines = await wholeFeed();
        const [row] = await queryRows<{ n: number }>(
          testDb.database.db,
          sql`SELECT count(*)::int AS n FROM ledger_feed_events`,
        );
        return lines.length === row?.n ? lines : undefined;
      });
      const consumer = startConsumer(file);
      try {
        await waitFor('the consumer at the head', () => kept(file).at(-1) === feed.at(-1));
      } finally {
        consumer.kill('SIGKILL');
      }
      assert.ok(feed.length > 200, `events written: ${feed.length}`);
      assert.deepEqual(kept(file), feed, 'every event kept once, in position order');
    }));
});
