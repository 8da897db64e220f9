/**
 * The change feed on the embedded database (PGlite, what `demo --serve` runs on): its triggers
 * write the events, and the feed, which cannot listen there, polls, stamps and serves them; a
 * webhook sink delivers them from a position kept there.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { readFeedStatus } from '../../src/db/queries/sink-status.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { openFeedService } from '../../src/feed/feed-service.js';
import { startSinkRunner } from '../../src/feed/sinks/sink-runner.js';
import { createWebhookTarget } from '../../src/feed/sinks/webhook-target.js';
import { type HttpSurface, jsonReply, startHttpSurface } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { insertRows } from '../helpers/feed.js';
import { waitFor } from '../helpers/wait-for.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

let dir: string;
let database: Database;
let surface: HttpSurface | undefined;
let feed: ReturnType<typeof openFeedService> | undefined;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ledger-indexer-feed-pglite-'));
  database = await openDatabase({ dataDir: dir });
  await migrateDatabase(database);
});
after(async () => {
  await surface?.close();
  await feed?.close();
  await database?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the change feed on the embedded database', () => {
  it('serves what the writes stored and changed, by polling', async () => {
    feed = openFeedService({
      database,
      databaseUrl: undefined,
      retentionMs: 86_400_000,
      logger: silentLogger(),
    });
    const ok = async () => jsonReply(200, {});
    surface = await startHttpSurface({
      host: '127.0.0.1',
      port: 0,
      routes: { page: ok, health: ok, ready: ok, status: ok, metrics: ok, feed: feed.handle },
      logger: silentLogger(),
    });
    const waiting = fetch(`${surface.url}/feed?after=0&wait=20s`);
    await insertRows(database.db, [{ rawId: 1 }, { rawId: 2 }]);
    await database.db.execute(sql`UPDATE ledger_transactions SET status = 'packaged' WHERE raw_id = 2`);
    const first = (await (await waiting).json()) as { events: FeedEvent[]; position: number };
    assert.ok(first.events.length >= 2);
    let events = first.events;
    if (events.length < 3) {
      const next = await fetch(`${surface.url}/feed?after=${first.position}&wait=20s`);
      events = [...events, ...((await next.json()) as { events: FeedEvent[] }).events];
    }
    assert.deepEqual(
      events.map((e) => [e.kind, e.rawId]),
      [
        ['stored', 1],
        ['stored', 2],
        ['changed', 2],
      ],
    );
    assert.deepEqual(events[2]?.fields, { status: ['confirmed', 'packaged'] });
  });

  it('is delivered by a webhook sink that keeps its position there', async () => {
    const receiver = await startWebhookReceiver('pglite-webhook-secret-0123');
    const runner = startSinkRunner({
      name: 'webhook',
      target: createWebhookTarget({
        sink: 'webhook',
        url: receiver.url,
        secret: 'pglite-webhook-secret-0123',
      }),
      filter: {},
      database,
      feed: () => (feed as NonNullable<typeof feed>).hub(),
      logger: silentLogger(),
      retry: { tries: 3, minMs: 20, maxMs: 100 },
      leaseMs: 5000,
    });
    try {
      await insertRows(database.db, [{ rawId: 3 }, { rawId: 4 }]);
      const status = await waitFor('the sink at the head', async () => {
        const read = await readFeedStatus(database.db);
        // Stamped first (the embedded database is polled), then delivered up to the head.
        return read.unstamped === 0 && read.head > 0 && read.sinks[0]?.position === read.head ? read : null;
      });
      const delivered = receiver.acknowledged.flatMap((b) => b.events.map((e) => [e.kind, e.rawId]));
      assert.deepEqual(delivered, [
        ['stored', 1],
        ['stored', 2],
        ['changed', 2],
        ['stored', 3],
        ['stored', 4],
      ]);
      assert.ok(receiver.acknowledged.every((b) => b.verified));
      assert.equal(status.sinks[0]?.deliveredBy, runner.owner);
    } finally {
      await runner.close();
      await receiver.close();
    }
  });
});
