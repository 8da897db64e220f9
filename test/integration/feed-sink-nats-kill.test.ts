/**
 * The NATS JetStream sink killed at random points and resumed: `serve` publishing the feed is
 * `kill -9`ed again and again while records are written, each time at a random moment after it
 * published more. A killed process's batch is published again by the next one, and the broker
 * drops the repeats by their `Nats-Msg-Id` (the position): the stream ends holding every event
 * of the feed exactly once, in position order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql } from 'drizzle-orm';
import { readFeedStatus } from '../../src/db/queries/sink-status.js';
import { queryRows } from '../../src/db/rows.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { readFeedPage } from '../../src/feed/feed-store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows } from '../helpers/feed.js';
import { freePort } from '../helpers/free-port.js';
import {
  connectTo,
  deleteStream,
  readStream,
  streamCount,
  TEST_NATS_URL,
  uniqueFeedNames,
} from '../helpers/nats.js';
import { type Rng, withSeed } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

/** Lives killed before the last one runs to the head. */
const KILLS = 4;

const names = uniqueFeedNames('feed-sink-nats-kill');
let testDb: TestDatabase;
let nc: NatsConnection;
let serve: CliRun | undefined;

before(async () => {
  testDb = await createTestDatabase();
  nc = await connectTo(TEST_NATS_URL);
});
after(async () => {
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGKILL');
  await serve?.done;
  await deleteStream(nc, names.stream);
  await nc?.close();
  await testDb?.drop();
});

async function startServe(): Promise<CliRun> {
  const port = await freePort();
  return runCli(['serve', '--http-port', String(port)], {
    DATABASE_URL: testDb.url,
    LOG_LEVEL: 'silent',
    LEDGER_NATS_URL: TEST_NATS_URL,
    LEDGER_NATS_STREAM: names.stream,
    LEDGER_NATS_SUBJECT: names.prefix,
    LEDGER_SINK_LEASE_MS: '1000',
    LEDGER_SINK_RETRY_MIN_MS: '20',
    LEDGER_SINK_RETRY_MAX_MS: '200',
  });
}

/** Inserts records in small transactions, and changes some, until `until.done`. */
async function writeRecords(rng: Rng, until: { done: boolean }): Promise<void> {
  let rawId = 1;
  while (!until.done) {
    await insertRows(
      testDb.database.db,
      Array.from({ length: rng.int(1, 8) }, () => ({ rawId: rawId++ })),
    );
    if (rng.chance(0.3)) {
      await testDb.database.db.execute(
        sql`UPDATE ledger_transactions SET status = 'packaged' WHERE raw_id = ${rng.int(1, rawId - 1)} AND status <> 'packaged'`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, rng.int(5, 40)));
  }
}

/** Every event the feed holds, in position order. */
async function feedEvents(): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (let at = 0; ; ) {
    const page = await readFeedPage(testDb.database, { after: at, limit: 1000 });
    if (page.kind !== 'events' || page.events.length === 0) return events;
    events.push(...page.events);
    at = page.position;
  }
}

/** Messages the stream holds; 0 before the sink made it. */
async function published(): Promise<number> {
  return streamCount(nc, names.stream).catch(() => 0);
}

describe('the NATS sink killed at random points', () => {
  it('ends with the stream holding every event of the feed once, in order, across kills', () =>
    withSeed(async (rng) => {
      const writing = { done: false };
      const writer = writeRecords(rng, writing);
      for (let life = 0; life < KILLS; life++) {
        const run = await startServe();
        serve = run;
        // Killed once it has published more, a random moment later: mid-batch or between batches.
        const before = await published();
        await waitFor(`life ${life} publishing`, async () => (await published()) > before, { everyMs: 10 });
        await new Promise((resolve) => setTimeout(resolve, rng.int(0, 300)));
        run.child.kill('SIGKILL');
        const ended = await run.done;
        assert.equal(ended.signal, 'SIGKILL', `life ${life} ended by ${ended.code}: ${ended.stderr}`);
      }
      serve = await startServe();
      writing.done = true;
      await writer;
      const expected = await waitFor('the sink at the head', async () => {
        const feed = await readFeedStatus(testDb.database.db);
        const [unstamped] = await queryRows<{ n: number }>(
          testDb.database.db,
          sql`SELECT count(*)::int AS n FROM ledger_feed_transactions WHERE last_position IS NULL`,
        );
        return unstamped?.n === 0 && feed.sinks[0]?.position === feed.head ? feedEvents() : null;
      });
      serve.child.kill('SIGTERM');
      const stopped = await serve.done;
      assert.equal(stopped.code, 0, stopped.stderr);

      const messages = await readStream(nc, names.stream);
      assert.deepEqual(
        messages.map((m) => m.msgId),
        expected.map((e) => String(e.position)),
        'every position once, in order: the repeats deduplicated by the broker',
      );
      assert.deepEqual(
        messages.map((m) => JSON.parse(m.payload) as FeedEvent),
        expected,
        'each message the event as the feed serves it',
      );
    }));
});
