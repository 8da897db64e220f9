/**
 * `ledger-indexer dead-letters`: lists the batches the sinks gave up on, and with `--replay`
 * delivers each again to its sink (the webhook signs it anew) and deletes it once the far side
 * took it; a batch refused again stays, and so does a stretch that expired (no events to send).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { batchBody } from '../../src/feed/sinks/sink-batches.js';
import { signWebhook, WEBHOOK_HEADERS } from '../../src/feed/sinks/webhook-signature.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const SECRET = 'whsec-dead-letters-0123456789';

let testDb: TestDatabase;

before(async () => {
  testDb = await createTestDatabase();
});

after(async () => {
  await testDb?.drop();
});

function event(position: number): FeedEvent {
  return {
    kind: 'stored',
    position,
    rawId: 100 + position,
    action: 'transfer',
    tokenTag: 'ethereum-usdc-0xa0b8',
    from: 'alice',
    to: 'bob',
    stampedAt: '2026-01-01T00:00:00.000Z',
    fields: {
      status: 'confirmed',
      internalStatus: '',
      targetChainTxHash: '',
      express: { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' },
    },
  };
}

/** A webhook receiver: what it was sent, answering `status()` to each. */
async function receiver(status: () => number) {
  const received: Array<{ body: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      received.push({ body, headers: request.headers });
      response.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function letterIds(): Promise<number[]> {
  const rows = await queryRows<{ id: string }>(
    testDb.database.db,
    sql`SELECT id::text FROM feed_sink_dead_letters ORDER BY id`,
  );
  return rows.map((r) => Number(r.id));
}

describe('dead-letters', () => {
  it('lists them, replays those with events to the webhook signed anew, deletes those delivered, keeps the rest', async () => {
    const { db } = testDb.database;
    await db.execute(sql`INSERT INTO feed_sinks (name, kind, position) VALUES ('webhook', 'webhook', 9)`);
    const batch = [event(3), event(4)];
    const body = batchBody('webhook', batch);
    await db.execute(sql`INSERT INTO feed_sink_dead_letters (sink, first_position, last_position, events, body, reason, attempts)
      VALUES ('webhook', 3, 4, 2, ${body}, 'POST failed: answered 503', 10),
             ('webhook', 5, 6, NULL, NULL, 'positions 5-6 expired before delivery', 0),
             ('webhook', 7, 7, 1, ${batchBody('webhook', [event(7)])}, 'POST failed: answered 400', 1)`);
    const [withEvents, expired, refused] = await letterIds();
    let answer = 200;
    const hook = await receiver(() => answer);
    const env = {
      DATABASE_URL: testDb.url,
      LEDGER_WEBHOOK_URL: hook.url,
      LEDGER_WEBHOOK_SECRET: SECRET,
      LEDGER_WEBHOOK_TIMEOUT_MS: '2000',
    };
    try {
      const listed = await runMain(['dead-letters'], env);
      assert.equal(listed.code, 0, listed.err);
      assert.match(listed.out, new RegExp(`#${withEvents} webhook positions 3-4 2 events after 10 tries`));
      assert.match(listed.out, new RegExp(`#${expired} webhook positions 5-6 expired`));
      assert.equal(hook.received.length, 0, 'listing sends nothing');

      // The receiver refuses the third again: it stays, and the run says so.
      let posts = 0;
      answer = 200;
      const refuseThird = () => (++posts === 2 ? 400 : 200);
      const second = await receiver(refuseThird);
      const replayed = await runMain(['dead-letters', '--replay'], {
        ...env,
        LEDGER_WEBHOOK_URL: second.url,
      });
      await second.close();
      assert.equal(replayed.code, 1, replayed.out + replayed.err);
      assert.match(replayed.out, new RegExp(`#${withEvents} webhook: delivered 2 events, deleted`));
      assert.match(replayed.out, new RegExp(`#${expired} webhook: kept: expired`));
      assert.match(replayed.out, new RegExp(`#${refused} webhook: kept: .*400`));
      assert.deepEqual(await letterIds(), [expired, refused]);
      const [sent] = second.received;
      assert.deepEqual(JSON.parse(sent!.body), JSON.parse(body), 'the batch as it was');
      const timestamp = Number(sent!.headers[WEBHOOK_HEADERS.timestamp]);
      assert.equal(
        sent!.headers[WEBHOOK_HEADERS.signature],
        signWebhook({ secret: SECRET, timestamp, body: sent!.body }),
      );

      // Once the receiver takes it, only the expired stretch is left, and the run succeeds.
      const again = await runMain(['dead-letters', '--replay', '--id', String(refused)], env);
      assert.equal(again.code, 0, again.out + again.err);
      assert.deepEqual(await letterIds(), [expired]);
      assert.equal(hook.received.length, 1);
      assert.deepEqual(
        (JSON.parse(hook.received[0]!.body) as { events: FeedEvent[] }).events.map((e) => e.position),
        [7],
      );
      const bad = await runMain(['dead-letters', '--id', 'x'], env);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--id must be a whole number/);
    } finally {
      await hook.close();
    }
  });
});
