/**
 * `GET /feed` on the HTTP surface: long polls that wait for the next commit, Server-Sent Events
 * resumed with `Last-Event-ID`, filters by account, token and action, 410 past the retention, a
 * slow client cut off at its buffer, and a thousand SSE clients served by one database listener.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { queryRows } from '../../src/db/rows.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { openFeedService } from '../../src/feed/feed-service.js';
import { expireFeed } from '../../src/feed/feed-store.js';
import { type HttpSurface, jsonReply, startHttpSurface } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows, openSse, type SseReader } from '../helpers/feed.js';
import { openTestSurface, parseSamples, sampleSum } from '../helpers/http-surface.js';
import { waitFor } from '../helpers/wait-for.js';

let testDb: TestDatabase;
let surface: HttpSurface;
const stop = new AbortController();
let nextRawId = 1;
const warnings: Array<Record<string, unknown>> = [];

before(async () => {
  testDb = await createTestDatabase();
  surface = await openTestSurface({
    testDb,
    signal: stop.signal,
    logger: pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) }),
  });
});
after(async () => {
  stop.abort();
  await surface?.close();
  await testDb?.drop();
});

interface PollAnswer {
  events: FeedEvent[];
  position: number;
  head: number;
}

async function poll(query: string): Promise<{ status: number; body: PollAnswer & Record<string, unknown> }> {
  const answer = await fetch(`${surface.url}/feed?${query}`);
  return { status: answer.status, body: (await answer.json()) as PollAnswer & Record<string, unknown> };
}

/** Writes `n` rows (one statement) and waits until the feed serves them; answers their rawIds. */
async function write(
  n: number,
  row: Partial<Parameters<typeof insertRows>[1][number]> = {},
): Promise<number[]> {
  const rawIds = Array.from({ length: n }, () => nextRawId++);
  await insertRows(
    testDb.database.db,
    rawIds.map((rawId) => ({ ...row, rawId })),
  );
  const last = rawIds.at(-1);
  await waitFor('the rows stamped', () => stamped(last));
  return rawIds;
}

/** Whether the event of `rawId` has its position (the process's stamper heard the commit). */
async function stamped(rawId: number | undefined): Promise<boolean> {
  const rows = await queryRows<{ n: number }>(
    testDb.database.db,
    sql`SELECT count(*)::int AS n FROM ledger_feed_events e JOIN ledger_feed_transactions t ON t.xid = e.xid
      WHERE e.raw_id = ${rawId ?? -1} AND t.last_position IS NOT NULL`,
  );
  return (rows[0]?.n ?? 0) > 0;
}

async function head(): Promise<number> {
  return (await poll('after=now')).body.position;
}

describe('GET /feed', () => {
  it('answers a long poll at once when events wait, and holds it until the next commit when none do', async () => {
    const [first] = await write(3);
    const now = await poll('after=0&limit=2');
    assert.equal(now.status, 200);
    assert.deepEqual(
      now.body.events.map((e) => e.rawId),
      [first, (first ?? 0) + 1],
      'a bounded batch, in order',
    );
    const position = await head();
    const started = Date.now();
    const waiting = poll(`after=${position}&wait=20s`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [late] = await write(1);
    const answer = await waiting;
    assert.deepEqual(
      answer.body.events.map((e) => e.rawId),
      [late],
    );
    assert.ok(Date.now() - started < 10_000, 'woken by the commit, not the wait');
    const empty = await poll(`after=${answer.body.position}&wait=300ms`);
    assert.deepEqual(empty.body.events, []);
    assert.equal(empty.body.position, answer.body.position);
    assert.equal((await poll('wait=forever')).status, 400);
  });

  it('filters by account (EVM in any case, a bundle by its items too), token and action, moving the position past what it leaves out', async () => {
    const evm = '0xAbCdEf0123456789aBcDeF0123456789abCDef01';
    const start = await head();
    const [mine] = await write(1, { from: evm, tokenTag: 'arweave-ar-0', action: 'burn' });
    await write(1, { to: evm, tokenTag: 'ethereum-usdc-0xa0b8', action: 'transfer' });
    const [last] = await write(1, { from: 'carol', to: 'dave', tokenTag: 'arweave-ar-0', action: 'burn' });
    const byAccount = await poll(`after=${start}&account=${evm.toLowerCase()}`);
    assert.deepEqual(
      byAccount.body.events.map((e) => e.rawId),
      [mine, (mine ?? 0) + 1],
    );
    const byAll = await poll(`after=${start}&account=${evm}&tokenTag=arweave-ar-0&action=burn`);
    assert.deepEqual(
      byAll.body.events.map((e) => e.rawId),
      [mine],
    );
    const none = await poll(`after=${start}&action=mint`);
    assert.deepEqual(none.body.events, []);
    assert.ok(none.body.position >= (await positionOf(last)), 'the position passed the events left out');

    // A bundle between others whose items move the account's tokens: found by the account too.
    const bundle = nextRawId;
    await testDb.database.db.execute(
      sql`INSERT INTO ledger_bundle_items (raw_id, item_index, tag, chain_id, from_account, to_account, amount)
        VALUES (${bundle}, 0, 'arweave-ar-0', '0', 'erin', ${evm.toLowerCase()}, 5),
          (${bundle}, 1, 'arweave-ar-0', '0', 'erin', 'frank', 7)`,
    );
    await write(1, { from: 'erin', to: 'bundler', action: 'bundle' });
    const afterLast = await positionOf(last);
    const inItems = await poll(`after=${afterLast}&account=${evm}`);
    assert.deepEqual(
      inItems.body.events.map((e) => [e.rawId, e.itemAccounts]),
      [[bundle, [evm.toLowerCase(), 'erin', 'frank']]],
    );
    assert.deepEqual(
      (await poll(`after=${afterLast}&account=frank`)).body.events.map((e) => e.rawId),
      [bundle],
    );
    assert.deepEqual((await poll(`after=${afterLast}&account=nobody`)).body.events, []);
  });

  it('streams Server-Sent Events, live and resumed from Last-Event-ID with nothing lost or repeated', async () => {
    const start = await head();
    const written = await write(5);
    const first = await openSse(`${surface.url}/feed?after=${start}`);
    await waitFor('five events', () => first.events.length >= 5);
    const more = await write(4);
    await waitFor('nine events, the last four live', () => first.events.length >= 9);
    const resumeFrom = first.events[6]?.position;
    first.close();
    await first.ended;
    const later = await write(3);
    const resumed = await openSse(`${surface.url}/feed?after=0`, { lastEventId: String(resumeFrom) });
    await waitFor('the rest', () => resumed.events.length >= 5);
    await new Promise((resolve) => setTimeout(resolve, 200));
    resumed.close();
    assert.deepEqual(
      first.events.map((e) => e.rawId),
      [...written, ...more],
    );
    assert.deepEqual(
      resumed.events.map((e) => e.rawId),
      [...more.slice(2), ...later],
      'Last-Event-ID wins over after',
    );
    // Filtered out, an event still moves the stream's id on.
    const filtered = await openSse(`${surface.url}/feed?after=${start}&action=mint`);
    await waitFor(
      'the id past the events left out',
      () => filtered.lastId() === String(resumed.events.at(-1)?.position),
    );
    filtered.close();
    assert.equal(filtered.events.length, 0);
  });

  it('answers 410 with the oldest position kept once the retention deleted what follows a position', async () => {
    await write(2);
    const last = await head();
    // Everything stamped until now is past the retention.
    await expireFeed(testDb.database, new Date(Date.now() + 60_000));
    const gone = await poll('after=0');
    assert.equal(gone.status, 410);
    assert.equal(gone.body.after, last);
    assert.equal(gone.body.oldest, last + 1);
    const sse = await fetch(`${surface.url}/feed`, {
      headers: { accept: 'text/event-stream', 'last-event-id': '1' },
    });
    assert.equal(sse.status, 410);
    await sse.body?.cancel();
    const [next] = await write(1);
    const resumed = await poll(`after=${last}`);
    assert.equal(resumed.status, 200);
    assert.deepEqual(
      resumed.body.events.map((e) => e.rawId),
      [next],
      'from the oldest kept on, nothing is missing',
    );
  });

  it('cuts off a client that does not read past its buffer, and keeps serving the others', async () => {
    const start = await head();
    const slow = await openSse(`${surface.url}/feed?after=${start}`, { paused: true });
    const fast = await openSse(`${surface.url}/feed?after=${start}`);
    const rawIds: number[] = [];
    for (let i = 0; i < 6; i++) rawIds.push(...(await write(5000, { from: 'x'.repeat(300) })));
    await waitFor('the fast client has every event', () => fast.events.length >= rawIds.length, {
      timeoutMs: 60_000,
    });
    const cut = await waitFor('the slow client cut off', () =>
      warnings.find((w) => w.msg === 'feed: slow client cut off'),
    );
    assert.ok(Number(cut.buffered_bytes) > 1024 * 1024, 'past its buffer');
    fast.close();
    assert.deepEqual(
      fast.events.map((e) => e.rawId),
      rawIds,
    );
    // It gets what was sent before the cut, then the end of the stream, and resumes from there.
    slow.response.resume();
    await slow.ended;
    const resumed = await openSse(`${surface.url}/feed`, { lastEventId: slow.lastId() ?? String(start) });
    await waitFor('the resumed client has the rest', () => resumed.events.at(-1)?.rawId === rawIds.at(-1), {
      timeoutMs: 60_000,
    });
    resumed.close();
    assert.ok(slow.events.length < rawIds.length, 'the slow client did not get everything before the cut');
    assert.deepEqual(
      [...slow.events, ...resumed.events].map((e) => e.rawId),
      rawIds,
      'nothing lost, nothing twice',
    );
  });

  it('counts its readers, how far each named one is behind, and what it sent, in the metrics', async () => {
    const start = await head();
    const named = await openSse(`${surface.url}/feed?after=${start}&consumer=dashboard`);
    const written = await write(3);
    await waitFor('the stream has the events', () => named.events.length === 3);
    // A named long poll behind the head: it asks after the stream's start.
    assert.equal((await poll(`after=${start}&consumer=reports`)).status, 200);
    const samples = parseSamples(await (await fetch(`${surface.url}/metrics`)).text());
    const top = (await poll('after=now')).body.position;
    assert.equal(sampleSum(samples, 'ledger_indexer_feed_head_position'), top);
    assert.equal(sampleSum(samples, 'ledger_indexer_feed_consumers', { mode: 'sse' }), 1);
    assert.equal(
      sampleSum(samples, 'ledger_indexer_feed_consumer_lag_positions', { consumer: 'dashboard' }),
      0,
    );
    assert.equal(
      sampleSum(samples, 'ledger_indexer_feed_consumer_lag_positions', { consumer: 'reports' }),
      top - start,
    );
    assert.ok((sampleSum(samples, 'ledger_indexer_feed_events_sent_total') ?? 0) >= written.length * 2);
    named.close();
    await named.ended;
    await waitFor('the stream gone from the metrics once it ends', async () => {
      const after = parseSamples(await (await fetch(`${surface.url}/metrics`)).text());
      return sampleSum(after, 'ledger_indexer_feed_consumers', { mode: 'sse' }) === 0;
    });
  });

  it('serves a thousand SSE clients from one database listener', async () => {
    const clients: SseReader[] = [];
    const start = await head();
    for (let i = 0; i < 1000; i++) clients.push(await openSse(`${surface.url}/feed?after=${start}`));
    const [rawId] = await write(1);
    await waitFor('every client has the event', () => clients.every((c) => c.events.length === 1), {
      timeoutMs: 60_000,
    });
    assert.ok(clients.every((c) => c.events[0]?.rawId === rawId));
    const listeners = await queryRows<{ n: number }>(
      testDb.database.db,
      sql`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'ledger-indexer-feed'`,
    );
    assert.equal(listeners[0]?.n, 1, 'one listening connection');
    for (const client of clients) client.close();
  });
});

async function positionOf(rawId: number | undefined): Promise<number> {
  const { body } = await poll(`after=0&limit=1000`);
  return body.events.find((e) => e.rawId === rawId)?.position ?? Number.POSITIVE_INFINITY;
}

describe('GET /feed, a client catching up', () => {
  it('is read for at its pace, and cut off when it leaves its buffer unread too long', async () => {
    const feed = openFeedService({
      database: testDb.database,
      databaseUrl: testDb.url,
      retentionMs: 86_400_000,
      logger: pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) }),
      limits: { maxBufferedBytes: 64 * 1024, drainMs: 500 },
    });
    const ok = async () => jsonReply(200, {});
    const own = await startHttpSurface({
      host: '127.0.0.1',
      port: 0,
      routes: { page: ok, health: ok, ready: ok, status: ok, metrics: ok, feed: feed.handle },
      logger: silentLogger(),
    });
    try {
      const start = await head();
      const rawIds: number[] = [];
      for (let i = 0; i < 4; i++) rawIds.push(...(await write(5000, { from: 'y'.repeat(300) })));
      const before = warnings.length;
      // Behind by 20,000 events: it catches up by pages, read as fast as it reads.
      const reading = await openSse(`${own.url}/feed?after=${start}`);
      await waitFor('the reading client caught up', () => reading.events.length === rawIds.length, {
        timeoutMs: 60_000,
      });
      reading.close();
      const stalled = await openSse(`${own.url}/feed?after=${start}`, { paused: true });
      await waitFor('the stalled client cut off', () =>
        warnings.slice(before).find((w) => w.msg === 'feed: slow client cut off'),
      );
      stalled.response.resume();
      await stalled.ended;
      assert.ok(stalled.events.length < rawIds.length);
    } finally {
      await own.close();
      await feed.close();
    }
  });
});
