/**
 * `ledger-indexer dead-letters`: lists the batches the sinks gave up on, and with `--replay`
 * delivers each again to its sink (the webhook signs it anew) and deletes it once the far side
 * took it; a batch refused again stays, and so does a stretch that expired (no events to send).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { batchBody } from '../../src/feed/sinks/sink-batches.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { syntheticEvents } from '../helpers/feed.js';
import { runMain } from '../helpers/run-main.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

const SECRET = 'whsec-dead-letters-0123456789';

let testDb: TestDatabase;

before(async () => {
  testDb = await createTestDatabase();
});

after(async () => {
  await testDb?.drop();
});

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
    const batch = syntheticEvents([3, 4]);
    const body = batchBody('webhook', batch);
    await db.execute(sql`INSERT INTO feed_sink_dead_letters (sink, first_position, last_position, events, body, reason, attempts)
      VALUES ('webhook', 3, 4, 2, ${body}, 'POST failed: answered 503', 10),
             ('webhook', 5, 6, NULL, NULL, 'positions 5-6 expired before delivery', 0),
             ('webhook', 7, 7, 1, ${batchBody('webhook', syntheticEvents([7]))}, 'POST failed: answered 400', 1)`);
    const [withEvents, expired, refused] = await letterIds();
    const hook = await startWebhookReceiver(SECRET);
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
      const second = await startWebhookReceiver(SECRET, (_batch, index) => ({
        status: index === 1 ? 400 : 200,
      }));
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
      assert.equal(sent!.verified, true, 'signed anew with the secret');

      // Once the receiver takes it, only the expired stretch is left, and the run succeeds.
      const again = await runMain(['dead-letters', '--replay', '--id', String(refused)], env);
      assert.equal(again.code, 0, again.out + again.err);
      assert.deepEqual(await letterIds(), [expired]);
      assert.equal(hook.received.length, 1);
      assert.deepEqual(
        hook.received[0]!.events.map((e) => e.position),
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
