/**
 * The sinks a process runs from its settings: the HTTP surface (as `serve` opens it) with a webhook
 * and a NATS JetStream destination configured delivers the feed to both, each from its own stored
 * position, shows both in `/status` and the metrics, and lets go of their leases when it closes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql } from 'drizzle-orm';
import type { FeedStatus } from '../../src/db/queries/sink-status.js';
import { queryRows } from '../../src/db/rows.js';
import type { HttpSurface } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows } from '../helpers/feed.js';
import { fetchText, openTestSurface, parseSamples, sampleSum } from '../helpers/http-surface.js';
import { connectTo, deleteStream, readStream, TEST_NATS_URL, uniqueFeedNames } from '../helpers/nats.js';
import { waitFor } from '../helpers/wait-for.js';
import { positionsOf, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SECRET = 'surface-webhook-secret-0123';
const names = uniqueFeedNames('feed-sinks-surface');
let testDb: TestDatabase;
let receiver: WebhookReceiver;
let nc: NatsConnection;
let surface: HttpSurface | undefined;
const stop = new AbortController();

before(async () => {
  testDb = await createTestDatabase();
  receiver = await startWebhookReceiver(SECRET);
  nc = await connectTo(TEST_NATS_URL);
});
after(async () => {
  stop.abort();
  await surface?.close();
  await deleteStream(nc, names.stream).catch(() => undefined);
  await nc?.drain();
  await receiver?.close();
  await testDb?.drop();
});

describe('the sinks of a process that serves the feed', () => {
  it('deliver the feed to the webhook and to NATS, each from its own position, shown in /status', async () => {
    surface = await openTestSurface({
      testDb,
      signal: stop.signal,
      env: {
        LEDGER_WEBHOOK_URL: receiver.url,
        LEDGER_WEBHOOK_SECRET: SECRET,
        LEDGER_WEBHOOK_FILTER: 'action=burn',
        LEDGER_NATS_URL: TEST_NATS_URL,
        LEDGER_NATS_STREAM: names.stream,
        LEDGER_NATS_SUBJECT: names.prefix,
      },
    });
    await insertRows(testDb.database.db, [
      { rawId: 1 },
      { rawId: 2, action: 'burn' },
      { rawId: 3 },
      { rawId: 4, action: 'burn' },
    ]);
    const url = surface.url;
    const feed = await waitFor('both sinks at the head', async () => {
      const status = (await fetchText(`${url}/status`)).json as { feed?: FeedStatus } | undefined;
      const sinks = status?.feed?.sinks ?? [];
      const head = status?.feed?.head ?? 0;
      return head > 0 && sinks.length === 2 && sinks.every((s) => s.position === head) ? status?.feed : null;
    });
    assert.deepEqual(
      feed.sinks.map((s) => [s.name, s.kind, s.filter, s.deliveredEvents, s.deadLetters]),
      [
        ['nats', 'nats', {}, 4, 0],
        ['webhook', 'webhook', { action: 'burn' }, 2, 0],
      ],
    );
    assert.deepEqual(
      receiver.acknowledged.flatMap((b) => b.events.map((e) => e.rawId)),
      [2, 4],
    );
    const messages = await readStream(nc, names.stream);
    assert.deepEqual(
      messages.map((m) => Number(m.msgId)),
      [1, 2, 3, 4].map((i) => feed.head - 4 + i),
    );
    assert.deepEqual(
      positionsOf(receiver.acknowledged),
      messages.filter((m) => JSON.parse(m.payload).action === 'burn').map((m) => Number(m.msgId)),
    );

    // The same in the metrics, read from the database at the scrape.
    const samples = parseSamples((await fetchText(`${url}/metrics`)).body);
    for (const [sink, delivered] of [
      ['nats', 4],
      ['webhook', 2],
    ] as const) {
      assert.equal(sampleSum(samples, 'ledger_indexer_sink_position', { sink }), feed.head, sink);
      assert.equal(sampleSum(samples, 'ledger_indexer_sink_lag_positions', { sink }), 0, sink);
      assert.equal(sampleSum(samples, 'ledger_indexer_sink_delivered_events', { sink }), delivered, sink);
      assert.equal(sampleSum(samples, 'ledger_indexer_sink_dead_letters', { sink }), 0, sink);
    }
    assert.equal(sampleSum(samples, 'ledger_indexer_feed_unstamped_transactions'), 0);

    await surface.close();
    surface = undefined;
    const leases = await queryRows<{ name: string; lease_owner: string | null }>(
      testDb.database.db,
      sql`SELECT name, lease_owner FROM feed_sinks ORDER BY name`,
    );
    assert.deepEqual(
      leases.map((l) => [l.name, l.lease_owner]),
      [
        ['nats', null],
        ['webhook', null],
      ],
    );
  });
});
