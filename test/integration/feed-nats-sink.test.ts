/**
 * The change feed's NATS JetStream destination against the real NATS server: every event one
 * message, `Nats-Msg-Id` its position, read back in position order field for field; a replay
 * deduplicated by the stream; the feed's own events as `GET /feed` serves them; the stream created
 * as configured, or an existing one used as it is, or refused with what to do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { readFeedPage, stampFeed } from '../../src/feed/feed-store.js';
import { createNatsTarget, type NatsTargetInput } from '../../src/feed/sinks/nats-target.js';
import { SinkDeliveryError } from '../../src/feed/sinks/sink-target.js';
import { createTestDatabase } from '../helpers/database.js';
import { insertRows, syntheticEvents } from '../helpers/feed.js';
import { openTestSurface } from '../helpers/http-surface.js';
import {
  connectTo,
  deleteStream,
  positions,
  readStream,
  streamCount,
  TEST_NATS_URL,
  uniqueFeedNames,
} from '../helpers/nats.js';

let nc: NatsConnection;
const streams: string[] = [];
const targets: Array<{ close(): Promise<void> }> = [];

before(async () => {
  nc = await connectTo(TEST_NATS_URL);
});
after(async () => {
  await Promise.all(targets.map((t) => t.close()));
  for (const stream of streams) await deleteStream(nc, stream);
  await nc.drain();
});

/** A target on the shared server with a stream and prefix of its own (deleted at the end). */
function target(
  names = uniqueFeedNames('nats-sink'),
  config: Partial<NatsTargetInput['config']> = {},
  input: Partial<NatsTargetInput> = {},
) {
  streams.push(names.stream);
  const created = createNatsTarget({
    config: {
      natsUrl: TEST_NATS_URL,
      natsStream: names.stream,
      natsSubject: names.prefix,
      natsDuplicateWindowMs: 120_000,
      natsToken: undefined,
      feedRetentionMs: 86_400_000,
      ...config,
    },
    timeoutMs: 5000,
    ...input,
  });
  targets.push(created);
  return { ...names, target: created };
}

/** The positions the stream holds, in its order, from their `Nats-Msg-Id`. */
async function storedPositions(stream: string): Promise<number[]> {
  return (await readStream(nc, stream)).map((m) => Number(m.msgId));
}

/** Whether `run` throws a SinkDeliveryError, not retryable, whose message matches every pattern. */
async function refusedFor(run: () => Promise<unknown>, patterns: RegExp[]): Promise<void> {
  await assert.rejects(run, (error: unknown) => {
    assert.ok(error instanceof SinkDeliveryError, String(error));
    assert.equal(error.retryable, false, error.message);
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  });
}

describe('the NATS destination of the change feed', () => {
  it('publishes each event once on <prefix>.<action>.<tokenTag>.<kind>, Nats-Msg-Id its position; a consumer reads them in position order, field for field', async () => {
    const { stream, prefix, target: nats } = target();
    const events = syntheticEvents(positions(1, 300));
    await nats.deliver(events.slice(0, 120));
    await nats.deliver(events.slice(120));

    const read = await readStream(nc, stream);
    assert.equal(read.length, events.length);
    assert.deepEqual(
      read.map((m) => m.msgId),
      events.map((e) => String(e.position)),
    );
    for (const [i, message] of read.entries()) {
      const event = events[i] as FeedEvent;
      assert.deepEqual(JSON.parse(message.payload), event);
      assert.equal(message.payload, JSON.stringify(event));
    }
    assert.equal(read[0]?.subject, `${prefix}.mint.arweave-ar-0.stored`);
    // A token tag with a dot, a space and wildcards stays one subject token.
    assert.equal(read[1]?.subject, `${prefix}.burn.bsc-odd%20tag%2Ex%2A%3E-0.stored`);
    assert.equal(read[4]?.subject, `${prefix}.mint.bsc-odd%20tag%2Ex%2A%3E-0.changed`);

    // A consumer filters by subject: the mints, or the changes.
    const mints = await readStream(nc, stream, {
      filter: `${prefix}.mint.>`,
      expected: events.filter((e) => e.action === 'mint').length,
    });
    assert.ok(mints.length > 0 && mints.every((m) => (JSON.parse(m.payload) as FeedEvent).action === 'mint'));
    const changes = await readStream(nc, stream, {
      filter: `${prefix}.*.*.changed`,
      expected: events.filter((e) => e.kind === 'changed').length,
    });
    assert.deepEqual(
      changes.map((m) => Number(m.msgId)),
      events.filter((e) => e.kind === 'changed').map((e) => e.position),
    );
  });

  it('adds nothing when a delivered batch is replayed, and exactly the new positions when a replay overlaps', async () => {
    const { stream, target: nats } = target();
    await nats.deliver(syntheticEvents(positions(1, 10)));
    assert.equal(await streamCount(nc, stream), 10);
    // A crash after the PubAcks but before the runner stored its position: the batch comes again.
    await nats.deliver(syntheticEvents(positions(1, 10)));
    assert.equal(await streamCount(nc, stream), 10);
    await nats.deliver(syntheticEvents(positions(5, 15)));
    assert.equal(await streamCount(nc, stream), 15);
    assert.deepEqual(await storedPositions(stream), positions(1, 15));
  });

  it('a second target on the same stream (a restarted process) is deduplicated the same way', async () => {
    const first = target();
    await first.target.deliver(syntheticEvents(positions(1, 50)));
    await first.target.close();
    const second = target({ stream: first.stream, prefix: first.prefix });
    await second.target.deliver(syntheticEvents(positions(30, 60)));
    assert.deepEqual(await storedPositions(first.stream), positions(1, 60));
  });

  it("delivers the feed's own events exactly as GET /feed serves them", async () => {
    const testDb = await createTestDatabase();
    const stop = new AbortController();
    const surface = await openTestSurface({ testDb, signal: stop.signal });
    try {
      await insertRows(testDb.database.db, [
        { rawId: 1, action: 'mint', tokenTag: 'ethereum-usdc-0xa0b8' },
        { rawId: 2, action: 'transfer', from: '0xAbCdEf0000000000000000000000000000000001' },
        { rawId: 3, action: 'burn', tokenTag: 'arweave-ar-0' },
      ]);
      await testDb.database.db.execute(
        sql`UPDATE ledger_transactions SET status = 'packaged', target_chain_tx_hash = '0xfeed' WHERE raw_id IN (1, 3)`,
      );
      await stampFeed(testDb.database);
      const page = await readFeedPage(testDb.database, { after: 0, limit: 100 });
      assert.ok(page.kind === 'events' && page.events.length === 5, JSON.stringify(page));

      const { stream, target: nats } = target();
      await nats.deliver(page.events);
      const served = (await (await fetch(`${surface.url}/feed?after=0&limit=100`)).json()) as {
        events: FeedEvent[];
      };
      assert.deepEqual(
        served.events.map((e) => e.kind),
        ['stored', 'stored', 'stored', 'changed', 'changed'],
      );
      const read = await readStream(nc, stream);
      assert.deepEqual(
        read.map((m) => m.payload),
        served.events.map((e) => JSON.stringify(e)),
      );
      assert.deepEqual(
        read.map((m) => m.msgId),
        served.events.map((e) => String(e.position)),
      );
    } finally {
      stop.abort();
      await surface.close();
      await testDb.drop();
    }
  });
});

describe('the stream of the NATS destination', () => {
  it('is created when missing: file storage, the feed subjects, the duplicate window and the retention as its age', async () => {
    const {
      stream,
      prefix,
      target: nats,
    } = target(undefined, {
      natsDuplicateWindowMs: 90_000,
      feedRetentionMs: 3 * 86_400_000,
    });
    await nats.ready();
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    assert.deepEqual(info.config.subjects, [`${prefix}.>`]);
    assert.equal(info.config.duplicate_window, 90_000 * 1e6);
    assert.equal(info.config.max_age, 3 * 86_400_000 * 1e6);
    assert.equal(info.config.storage, StorageType.File);
    assert.equal(info.config.retention, RetentionPolicy.Limits);
    assert.equal(info.config.discard, DiscardPolicy.Old);
  });

  it('is used as it is when it exists and captures the subjects: a shorter duplicate window is only warned about', async () => {
    const names = uniqueFeedNames('nats-sink');
    const jsm = await jetstreamManager(nc);
    streams.push(names.stream);
    await jsm.streams.add({
      name: names.stream,
      subjects: [names.prefix.replace(/\.feed$/, '.>')],
      duplicate_window: 5_000 * 1e6,
    });
    const warnings: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
    const { target: nats } = target(names, {}, { logger });
    await nats.deliver(syntheticEvents(positions(1, 3)));
    const info = await jsm.streams.info(names.stream);
    assert.equal(info.config.duplicate_window, 5_000 * 1e6, 'unchanged');
    assert.deepEqual(info.config.subjects, [names.prefix.replace(/\.feed$/, '.>')]);
    assert.equal(info.state.messages, 3);
    assert.deepEqual(
      warnings.map((w) => [w.stream, w.duplicate_window_ms, w.wanted_ms]),
      [[names.stream, 5000, 120_000]],
    );
    assert.match(String(warnings[0]?.msg), /shorter duplicate window/);
  });

  it('is refused, with what to do, when it exists with subjects that do not capture the feed', async () => {
    const names = uniqueFeedNames('nats-sink');
    const jsm = await jetstreamManager(nc);
    streams.push(names.stream);
    const other = [`${names.prefix}.transfer.>`, `${names.prefix}x.>`];
    await jsm.streams.add({ name: names.stream, subjects: other });
    const { target: nats } = target(names);
    for (const run of [() => nats.ready(), () => nats.deliver(syntheticEvents([1]))]) {
      await refusedFor(run, [
        new RegExp(`NATS stream ${names.stream} exists with subjects`),
        new RegExp(JSON.stringify(other).replace(/[.*>[\]]/g, '\\$&')),
        new RegExp(`do not capture ${names.prefix.replace(/\./g, '\\.')}\\.>`),
        /LEDGER_NATS_STREAM or LEDGER_NATS_SUBJECT/,
      ]);
    }
    const info = await jsm.streams.info(names.stream);
    assert.deepEqual(info.config.subjects, other, 'the stream is left as it was');
    assert.equal(info.state.messages, 0);
  });

  it('deleted or edited under a running target: the next delivery fails retryably, and the one after creates it again or refuses it', async () => {
    const jsm = await jetstreamManager(nc);
    const deleted = target();
    await deleted.target.deliver(syntheticEvents(positions(1, 5)));
    await jsm.streams.delete(deleted.stream);
    await assert.rejects(deleted.target.deliver(syntheticEvents(positions(6, 10))), (error: unknown) => {
      assert.ok(error instanceof SinkDeliveryError && error.retryable, String(error));
      assert.match(error.message, /publishing position 6: no responders/);
      return true;
    });
    await deleted.target.deliver(syntheticEvents(positions(6, 10)));
    assert.deepEqual(await storedPositions(deleted.stream), positions(6, 10));

    const edited = target();
    await edited.target.deliver(syntheticEvents([1]));
    await jsm.streams.update(edited.stream, { subjects: [`${edited.prefix}.mint.>`] });
    await assert.rejects(edited.target.deliver(syntheticEvents([2])), (error: unknown) => {
      assert.ok(error instanceof SinkDeliveryError && error.retryable, String(error));
      return true;
    });
    await refusedFor(
      () => edited.target.deliver(syntheticEvents([2])),
      [new RegExp(`NATS stream ${edited.stream} exists with subjects`)],
    );
  });

  it('is refused, naming the stream that holds them, when another stream already captures the subjects', async () => {
    const holder = uniqueFeedNames('nats-sink');
    const jsm = await jetstreamManager(nc);
    streams.push(holder.stream);
    await jsm.streams.add({ name: holder.stream, subjects: [`${holder.prefix}.>`] });
    const { target: nats } = target({ stream: `${holder.stream}_2`, prefix: holder.prefix });
    await refusedFor(
      () => nats.deliver(syntheticEvents([1])),
      [new RegExp(`${holder.stream}_2 cannot be created: ${holder.stream} already captures`)],
    );
  });
});
