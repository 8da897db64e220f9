/**
 * The webhook sink against a real receiver on 127.0.0.1 and a real feed: signed batches in
 * position order within their bounds, a filter, retries with backoff then a dead letter, a 4xx
 * dead-lettered at once, a stretch expired before delivery, a stop mid-batch resumed, and two
 * runners of one sink delivering one at a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { readDeadLetters } from '../../src/db/queries/sink-dead-letters.js';
import { queryRows } from '../../src/db/rows.js';
import type { FeedFilter } from '../../src/feed/feed-event.js';
import { type FeedService, openFeedService } from '../../src/feed/feed-service.js';
import { expireFeed, readFeedPage } from '../../src/feed/feed-store.js';
import type { BatchBounds, SinkRetryPolicy } from '../../src/feed/sinks/sink-batches.js';
import { type SinkRunner, startSinkRunner } from '../../src/feed/sinks/sink-runner.js';
import { verifyWebhookSignature } from '../../src/feed/sinks/webhook-signature.js';
import { createWebhookTarget } from '../../src/feed/sinks/webhook-target.js';
import { type Logger, silentLogger } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows } from '../helpers/feed.js';
import { waitFor } from '../helpers/wait-for.js';
import { positionsOf, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SECRET = 'test-webhook-secret-0123456789';
const FAST_RETRY: SinkRetryPolicy = { tries: 3, minMs: 40, maxMs: 400 };

let testDb: TestDatabase;
let feed: FeedService;
let receiver: WebhookReceiver;
let nextRawId = 1;
const runners: SinkRunner[] = [];

before(async () => {
  testDb = await createTestDatabase();
  feed = openFeedService({
    database: testDb.database,
    databaseUrl: testDb.url,
    retentionMs: 7 * 86_400_000,
    logger: silentLogger(),
  });
  receiver = await startWebhookReceiver(SECRET);
});
after(async () => {
  await Promise.all(runners.map((r) => r.close()));
  await feed?.close();
  await receiver?.close();
  await testDb?.drop();
});

/** Starts a runner of sink `name` posting to the receiver. */
function startRunner(
  name: string,
  options: {
    filter?: FeedFilter;
    bounds?: BatchBounds;
    retry?: SinkRetryPolicy;
    leaseMs?: number;
    logger?: Logger;
    url?: string;
  } = {},
): SinkRunner {
  const runner = startSinkRunner({
    name,
    target: createWebhookTarget({
      sink: name,
      url: options.url ?? receiver.url,
      secret: SECRET,
      timeoutMs: 5000,
    }),
    filter: options.filter ?? {},
    database: testDb.database,
    feed: feed.hub,
    logger: options.logger ?? silentLogger(),
    retry: options.retry ?? FAST_RETRY,
    leaseMs: options.leaseMs ?? 5000,
    bounds: options.bounds,
  });
  runners.push(runner);
  return runner;
}

async function stop(runner: SinkRunner): Promise<void> {
  runners.splice(runners.indexOf(runner), 1);
  await runner.close();
}

/** Writes `n` rows in one transaction; answers their rawIds. */
async function write(n: number, row: { action?: string } = {}): Promise<number[]> {
  const rawIds = Array.from({ length: n }, () => nextRawId++);
  await insertRows(
    testDb.database.db,
    rawIds.map((rawId) => ({ ...row, rawId })),
  );
  return rawIds;
}

/** Every position the feed still holds after `after`, once stamped (the hub stamps on commit). */
async function feedPositions(after = 0): Promise<number[]> {
  await (await feed.hub()).settle();
  const positions: number[] = [];
  for (let at = after; ; ) {
    const page = await readFeedPage(testDb.database, { after: at, limit: 1000 });
    if (page.kind === 'gone') {
      at = page.horizon;
      continue;
    }
    if (page.events.length === 0) return positions;
    positions.push(...page.events.map((e) => e.position));
    at = page.position;
  }
}

async function sinkRow(name: string) {
  const [row] = await queryRows<{ position: string; delivered_events: string; lease_owner: string | null }>(
    testDb.database.db,
    sql`SELECT position::text, delivered_events::text, lease_owner FROM feed_sinks WHERE name = ${name}`,
  );
  return row;
}

/** Waits until sink `name` stands at `position`. */
async function reaches(name: string, position: number): Promise<void> {
  await waitFor(
    `sink ${name} at ${position}`,
    async () => Number((await sinkRow(name))?.position) === position,
  );
}

/** Starts a runner of sink `name` and waits until it has delivered all there is. */
async function caughtUp(name: string, options: Parameters<typeof startRunner>[1] = {}): Promise<SinkRunner> {
  const runner = startRunner(name, options);
  await reaches(name, (await feedPositions()).at(-1) ?? -1);
  return runner;
}

/** The deliveries of sink `name` received so far. */
const of = (name: string) => receiver.received.filter((b) => b.sink === name);

describe('the webhook sink', () => {
  it('delivers every event in position order, in signed batches within their bounds, and stores its position', async () => {
    await write(130);
    await write(45, { action: 'burn' });
    await testDb.database.db.execute(
      sql`UPDATE ledger_transactions SET status = 'packaged' WHERE raw_id <= 30`,
    );
    const expected = await feedPositions();
    assert.equal(expected.length, 205);
    const runner = startRunner('all', { bounds: { maxEvents: 40, maxBytes: 8 * 1024 } });
    await reaches('all', expected.at(-1) ?? -1);
    const batches = of('all');
    assert.deepEqual(positionsOf(batches), expected, 'each event once, in position order');
    for (const batch of batches) {
      assert.ok(batch.events.length <= 40, `a batch of ${batch.events.length} events`);
      assert.ok(
        Buffer.byteLength(batch.body) <= 8 * 1024,
        `a body of ${Buffer.byteLength(batch.body)} bytes`,
      );
      assert.equal(batch.first, batch.events[0]?.position);
      assert.equal(batch.last, batch.events.at(-1)?.position);
      assert.equal(batch.delivery, `all:${batch.first}-${batch.last}`);
      assert.ok(batch.verified, 'signed with the secret');
      const other = { ...batch, secret: 'another-secret-0123456789' };
      assert.equal(verifyWebhookSignature(other), false, 'a signature that another secret does not make');
      assert.equal(verifyWebhookSignature({ ...batch, secret: SECRET, body: `${batch.body} ` }), false);
    }
    // The byte bound cut batches before the event bound would have.
    assert.ok(batches.some((b) => b.events.length < 40 && b !== batches.at(-1)));
    const changed = batches.flatMap((b) => b.events).filter((e) => e.kind === 'changed');
    assert.equal(changed.length, 30);
    const row = await sinkRow('all');
    assert.equal(Number(row?.delivered_events), 205);
    assert.equal(row?.lease_owner, runner.owner);
    await stop(runner);
    assert.equal((await sinkRow('all'))?.lease_owner, null, 'a clean stop lets go of the lease');
  });

  it('delivers only what its filter lets through, and still moves past the rest', async () => {
    const runner = startRunner('burns', { filter: { action: 'burn' } });
    await write(5, { action: 'burn' });
    await write(20);
    const head = (await feedPositions()).at(-1) ?? -1;
    await reaches('burns', head);
    const events = of('burns').flatMap((b) => b.events);
    assert.equal(events.length, 50, 'the 45 burns stored before it started and the 5 after');
    assert.ok(events.every((e) => e.action === 'burn'));
    assert.equal(Number((await sinkRow('burns'))?.delivered_events), 50);
    await stop(runner);
  });

  it('sends the user and password of its URL as Basic authorization', async () => {
    const url = new URL(receiver.url);
    url.username = 'ledger';
    url.password = 'p@ss word';
    const runner = await caughtUp('authorized', { url: url.toString() });
    const expected = `Basic ${Buffer.from('ledger:p@ss word').toString('base64')}`;
    assert.ok(of('authorized').length > 0);
    assert.ok(of('authorized').every((b) => b.authorization === expected));
    assert.ok(of('all').every((b) => b.authorization === undefined));
    await stop(runner);
  });

  it('retries a failing batch with growing waits, then dead-letters it with its body and goes on', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    const runner = await caughtUp('retried', { retry: { tries: 4, minMs: 80, maxMs: 1000 }, logger });
    const before = of('retried').length;
    let failing = true;
    receiver.setScript((batch) =>
      batch.sink === 'retried' && failing ? { status: 503, body: 'down for a while' } : {},
    );
    const doomed = await write(3);
    const letters = await waitFor('a dead letter', async () => {
      const found = await readDeadLetters(testDb.database.db, { sink: 'retried' });
      return found.length > 0 ? found : null;
    });
    failing = false;
    const tries = of('retried').slice(before);
    assert.equal(tries.length, 4, 'four tries');
    assert.ok(
      tries.every((t) => t.body === tries[0]?.body),
      'the same body each try',
    );
    // Waits drawn from the upper half of a ceiling doubling from 80 ms: at least 40, 80, 160 ms.
    const gaps = tries.slice(1).map((t, i) => t.at - (tries[i]?.at ?? 0));
    for (const [i, gap] of gaps.entries())
      assert.ok(gap >= 40 * 2 ** i - 5, `wait ${i + 1}: ${gap.toFixed(0)} ms`);
    const [letter] = letters;
    assert.equal(letters.length, 1);
    assert.equal(letter?.attempts, 4);
    assert.equal(letter?.events, 3);
    assert.equal(letter?.body, tries[0]?.body, 'the body as sent');
    assert.deepEqual(
      JSON.parse(letter?.body ?? '{}').events.map((e: { rawId: number }) => e.rawId),
      doomed,
    );
    assert.match(letter?.reason ?? '', /answered HTTP 503: down for a while$/);
    // It went on: what comes next is delivered.
    const next = await write(2);
    const head = (await feedPositions()).at(-1) ?? -1;
    await reaches('retried', head);
    assert.deepEqual(
      of('retried')
        .slice(before + 4)
        .flatMap((b) => b.events.map((e) => e.rawId)),
      next,
    );
    assert.match(String((await statusOf('retried')).last_error), /HTTP 503/);
    // Each failed try and the dead letter are logged (warn, then error), the secret never.
    const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; attempt?: number });
    const retried = logged.filter((l) => l.msg === 'sink: delivery failed, retrying');
    assert.deepEqual(
      retried.map((l) => [l.level, l.attempt]),
      [
        [40, 1],
        [40, 2],
        [40, 3],
      ],
    );
    assert.equal(logged.filter((l) => l.msg === 'sink: batch dead-lettered' && l.level === 50).length, 1);
    assert.ok(!lines.some((line) => line.includes(SECRET)), 'the secret is never logged');
    await stop(runner);
    receiver.setScript(() => ({}));
  });

  it('dead-letters a batch the receiver refuses with a 4xx at once, without trying again', async () => {
    const runner = await caughtUp('refused');
    const before = of('refused').length;
    receiver.setScript((batch) =>
      batch.sink === 'refused' ? { status: 422, body: { error: 'bad shape' } } : {},
    );
    await write(2);
    const head = (await feedPositions()).at(-1) ?? -1;
    await reaches('refused', head);
    const [letter, ...more] = await readDeadLetters(testDb.database.db, { sink: 'refused' });
    assert.equal(more.length, 0);
    assert.equal(letter?.attempts, 1);
    assert.equal(of('refused').length - before, 1, 'one try');
    assert.match(letter?.reason ?? '', /HTTP 422/);
    await stop(runner);
    receiver.setScript(() => ({}));
  });

  it('waits as long as a 429 asks (Retry-After) before trying again', async () => {
    const runner = await caughtUp('limited', { retry: { tries: 3, minMs: 10, maxMs: 5000 } });
    const before = of('limited').length;
    let answered = 0;
    receiver.setScript((batch) =>
      batch.sink === 'limited' && answered++ === 0 ? { status: 429, headers: { 'retry-after': '1' } } : {},
    );
    await write(1);
    await waitFor('two tries', () => of('limited').length >= before + 2);
    const [first, second] = of('limited').slice(before);
    assert.ok((second?.at ?? 0) - (first?.at ?? 0) >= 990, 'a second later');
    assert.equal((await readDeadLetters(testDb.database.db, { sink: 'limited' })).length, 0);
    await stop(runner);
    receiver.setScript(() => ({}));
  });

  it('stops mid-batch at once, and the next run sends that batch again', async () => {
    await write(4);
    await feedPositions();
    const start = Number((await sinkRow('all'))?.position);
    receiver.setScript((batch) => (batch.sink === 'all' ? { hang: true } : {}));
    const runner = startRunner('all');
    await waitFor('the batch in flight', () => of('all').some((b) => b.first > start));
    const began = performance.now();
    await stop(runner);
    assert.ok(performance.now() - began < 2000, 'the stop does not wait for the answer');
    assert.equal(Number((await sinkRow('all'))?.position), start, 'not moved past what was not acknowledged');
    assert.equal((await sinkRow('all'))?.lease_owner, null);
    receiver.setScript(() => ({}));
    const sent = of('all').filter((b) => b.first > start).length;
    const again = startRunner('all');
    const head = (await feedPositions()).at(-1) ?? -1;
    await reaches('all', head);
    const resent = of('all').filter((b) => b.first > start);
    assert.equal(resent.length, sent + 1);
    assert.deepEqual(resent.at(-1)?.events, resent[0]?.events, 'the same batch again');
    await stop(again);
  });

  it('records a stretch expired before delivery as a dead letter and goes on from the horizon', async () => {
    const runner = startRunner('late');
    let head = (await feedPositions()).at(-1) ?? -1;
    await reaches('late', head);
    await stop(runner);
    const stoppedAt = head;
    await write(6);
    const lost = await feedPositions(head);
    await expireFeed(testDb.database, new Date(Date.now() + 3_600_000));
    const kept = await write(2);
    head = (await feedPositions()).at(-1) ?? -1;
    const again = startRunner('late');
    await reaches('late', head);
    const [letter, ...more] = await readDeadLetters(testDb.database.db, { sink: 'late' });
    assert.equal(more.length, 0);
    // The stretch from its position to the horizon: the six events written while it was stopped.
    assert.equal(lost.length, 6);
    assert.deepEqual([letter?.firstPosition, letter?.lastPosition], [stoppedAt + 1, lost.at(-1)]);
    assert.equal(letter?.events, null);
    assert.equal(letter?.body, null);
    assert.match(letter?.reason ?? '', /expired before they were delivered/);
    const delivered = of('late').flatMap((b) => b.events.map((e) => e.rawId));
    assert.deepEqual(delivered.slice(-2), kept);
    await stop(again);
  });

  it('is delivered by one of two runners at a time; the other takes over when that one stops', async () => {
    receiver.setScript(() => ({ delayMs: 15 }));
    const a = startRunner('shared', { leaseMs: 1500, bounds: { maxEvents: 5, maxBytes: 1 << 20 } });
    const b = startRunner('shared', { leaseMs: 1500, bounds: { maxEvents: 5, maxBytes: 1 << 20 } });
    for (let i = 0; i < 6; i++) await write(7);
    let head = (await feedPositions()).at(-1) ?? -1;
    await reaches('shared', head);
    const holder = (await sinkRow('shared'))?.lease_owner;
    const [holding, waiting] = holder === a.owner ? [a, b] : [b, a];
    assert.equal(holder, holding.owner);
    await stop(holding);
    await write(9);
    head = (await feedPositions()).at(-1) ?? -1;
    await reaches('shared', head);
    assert.equal((await sinkRow('shared'))?.lease_owner, waiting.owner);
    const positions = positionsOf(of('shared'));
    assert.deepEqual(
      positions,
      [...new Set(positions)].sort((x, y) => x - y),
      'each event once, in order',
    );
    assert.deepEqual(positions, await feedPositions());
    assert.equal(receiver.mostAtOnce('shared'), 1, 'never two deliveries at once');
    await stop(waiting);
    receiver.setScript(() => ({}));
  });
});

async function statusOf(name: string) {
  const [row] = await queryRows<{ last_error: string | null }>(
    testDb.database.db,
    sql`SELECT last_error FROM feed_sinks WHERE name = ${name}`,
  );
  return row ?? { last_error: null };
}
