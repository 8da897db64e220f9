/**
 * The change feed's NATS destination when the broker fails: a server that does not answer is a
 * retryable failure within a bounded time, never a hang; a server killed in the middle of a batch
 * and started again takes the replayed batch with every position exactly once (its duplicate
 * window survives the restart); credentials it refuses are not retryable and never shown.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { NatsConnection } from '@nats-io/transport-node';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { createNatsTarget, type NatsTarget } from '../../src/feed/sinks/nats-target.js';
import { SinkDeliveryError } from '../../src/feed/sinks/sink-target.js';
import { syntheticEvents } from '../helpers/feed.js';
import { freePort } from '../helpers/free-port.js';
import {
  connectTo,
  type PrivateNats,
  positions,
  readStream,
  startPrivateNats,
  uniqueFeedNames,
} from '../helpers/nats.js';
import { waitFor } from '../helpers/wait-for.js';

const TIMEOUT_MS = 1500;
const servers: PrivateNats[] = [];
const targets: NatsTarget[] = [];
const connections: NatsConnection[] = [];

after(async () => {
  await Promise.all(targets.map((t) => t.close()));
  await Promise.all(connections.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.destroy()));
});

async function privateNats(args: string[] = [], port?: number): Promise<PrivateNats> {
  const server = await startPrivateNats({ args, port });
  servers.push(server);
  return server;
}

function target(url: string, token?: string): NatsTarget & { stream: string; prefix: string } {
  const names = uniqueFeedNames('nats-failures');
  const created = createNatsTarget({
    config: {
      natsUrl: url,
      natsStream: names.stream,
      natsSubject: names.prefix,
      natsDuplicateWindowMs: 120_000,
      natsToken: token,
      feedRetentionMs: 86_400_000,
    },
    timeoutMs: TIMEOUT_MS,
  });
  targets.push(created);
  return Object.assign(created, names);
}

/** How long `run` took to throw, and what it threw. */
async function failure(run: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await run();
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  assert.fail('it did not fail');
}

/** Delivers `events` as the sink runner does: again after each retryable failure, until it passes. */
async function deliverUntilAcknowledged(nats: NatsTarget, events: readonly FeedEvent[]): Promise<void> {
  await waitFor(
    'the batch to be acknowledged',
    async () => {
      try {
        await nats.deliver(events);
        return true;
      } catch (error) {
        if (!(error instanceof SinkDeliveryError && error.retryable)) throw error;
        return false;
      }
    },
    { timeoutMs: 20_000, everyMs: 100 },
  );
}

describe('the NATS destination when the broker fails', () => {
  it('fails retryably within its timeout on a port nothing listens on, and delivers once a server is there', async () => {
    const port = await freePort();
    const nats = target(`nats://127.0.0.1:${port}`);
    for (const run of [() => nats.ready(), () => nats.deliver(syntheticEvents([1, 2]))]) {
      const { error, ms } = await failure(run);
      assert.ok(error instanceof SinkDeliveryError, String(error));
      assert.equal(error.retryable, true);
      assert.match(error.message, new RegExp(`NATS: connecting to 127\\.0\\.0\\.1:${port}`));
      assert.ok(ms < TIMEOUT_MS + 1000, `failed after ${ms} ms`);
    }
    const server = await privateNats([], port);
    await deliverUntilAcknowledged(nats, syntheticEvents([1, 2]));
    const reader = await connectTo(server.url);
    connections.push(reader);
    assert.deepEqual(
      (await readStream(reader, nats.stream)).map((m) => m.msgId),
      ['1', '2'],
    );
  });

  it('a server killed in the middle of a batch: the delivery fails retryably, and the replay after its restart stores each position exactly once', async () => {
    const server = await privateNats();
    const nats = target(server.url);
    await nats.deliver(syntheticEvents(positions(1, 100)));

    // Kill the server once a random number of the next batch's messages reached it.
    const batch = syntheticEvents(positions(101, 3100));
    const killAt = 100 + Math.floor(Math.random() * 2000);
    const watcher = await connectTo(server.url);
    connections.push(watcher);
    let seen = 0;
    let killed: Promise<void> | undefined;
    watcher.subscribe(`${nats.prefix}.>`, {
      callback: () => {
        seen += 1;
        if (seen === killAt) killed = server.kill();
      },
    });
    await watcher.flush();
    const { error, ms } = await failure(() => nats.deliver(batch));
    assert.ok(error instanceof SinkDeliveryError && error.retryable, String(error));
    assert.ok(killed !== undefined, `the server was killed (${seen} of ${batch.length} seen)`);
    assert.ok(ms < TIMEOUT_MS + 3000, `failed after ${ms} ms, not at once`);
    await killed;

    await server.start();
    // The same target reconnects by itself; the runner delivers the unacknowledged batch again.
    await deliverUntilAcknowledged(nats, batch);
    const reader = await connectTo(server.url);
    connections.push(reader);
    const read = await readStream(reader, nats.stream);
    assert.deepEqual(
      read.map((m) => Number(m.msgId)),
      positions(1, 3100),
      `killed after ${killAt} messages of the batch: each position once, in order`,
    );
  });

  it('refuses a wrong token without retrying and without showing it; delivers with the right one', async () => {
    const token = 'tok-9f8e7d6c5b4a';
    const server = await privateNats(['--auth', token]);
    for (const wrong of [undefined, 'tok-wrong-0000']) {
      const { error } = await failure(() => target(server.url, wrong).deliver(syntheticEvents([1])));
      assert.ok(error instanceof SinkDeliveryError, String(error));
      assert.equal(error.retryable, false, error.message);
      assert.match(error.message, /refused: .*LEDGER_NATS_TOKEN/);
      assert.ok(!error.message.includes(token) && !error.message.includes('tok-wrong'), error.message);
    }
    const nats = target(server.url, token);
    await nats.deliver(syntheticEvents([1, 2, 3]));
    const reader = await connectTo(server.url, { token });
    connections.push(reader);
    assert.equal((await readStream(reader, nats.stream)).length, 3);
  });

  it('takes a user and password from LEDGER_NATS_URL', async () => {
    const server = await privateNats(['--user', 'feed', '--pass', 'pa55-w0rd']);
    const { error } = await failure(() =>
      target(server.url.replace('//', '//feed:wrong-pass@')).deliver(syntheticEvents([1])),
    );
    assert.ok(error instanceof SinkDeliveryError && !error.retryable, String(error));
    assert.ok(!error.message.includes('wrong-pass'), error.message);
    const nats = target(server.url.replace('//', '//feed:pa55-w0rd@'));
    await nats.deliver(syntheticEvents([1, 2]));
  });

  it('never falls back to a connection without TLS when LEDGER_NATS_URL says tls://', async () => {
    const server = await privateNats();
    const { error } = await failure(() => target(server.url.replace('nats://', 'tls://')).ready());
    // The client reports it as a connection failure (a class of its own would be needed to tell).
    assert.ok(error instanceof SinkDeliveryError, String(error));
    assert.match(error.message, /server does not support 'tls'/);
  });
});
