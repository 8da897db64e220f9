/**
 * The webhook sink killed at random points and resumed: `serve` with a webhook delivers the feed
 * while records are written, and is `kill -9`ed again and again (while a batch is in flight,
 * right after one was acknowledged, or between batches), the receiver now and then dropping a
 * connection. The receiver ends with every event of the feed, and repeats of nothing but what the
 * at-least-once rule allows: a try cut short, and the one batch a killed process had in flight.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { readFeedStatus } from '../../src/db/queries/sink-status.js';
import { queryRows } from '../../src/db/rows.js';
import { readFeedPage } from '../../src/feed/feed-store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows } from '../helpers/feed.js';
import { freePort } from '../helpers/free-port.js';
import type { ScriptedReply } from '../helpers/http-server.js';
import { createRng, testSeed } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  positionsOf,
  type ReceivedBatch,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../helpers/webhook-receiver.js';
import { type CliRun, runCli } from './sync-cli-run.js';

const SECRET = 'kill-test-webhook-secret';
const SEED = testSeed();

let testDb: TestDatabase;
let receiver: WebhookReceiver;
let serve: CliRun | undefined;

before(async () => {
  testDb = await createTestDatabase();
  receiver = await startWebhookReceiver(SECRET);
});
after(async () => {
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGKILL');
  await serve?.done;
  await receiver?.close();
  await testDb?.drop();
});

/** A seeded random source as a function of [0, 1) (the tests' own generator): a failure is replayed with `TEST_SEED`. */
function random(seed: number): () => number {
  const rng = createRng(seed);
  return () => rng.next();
}

/** `serve` with the webhook sink; `listening` resolves once it answers `/health`. */
async function startServe(): Promise<CliRun & { listening: () => Promise<void> }> {
  const port = await freePort();
  const run = runCli(['serve', '--http-port', String(port)], {
    DATABASE_URL: testDb.url,
    LOG_LEVEL: 'silent',
    LEDGER_WEBHOOK_URL: receiver.url,
    LEDGER_WEBHOOK_SECRET: SECRET,
    LEDGER_SINK_LEASE_MS: '1000',
    LEDGER_SINK_RETRY_MIN_MS: '20',
    LEDGER_SINK_RETRY_MAX_MS: '200',
  });
  const listening = async () => {
    await waitFor('serve to answer /health', async () => {
      const answer = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
      await answer?.body?.cancel();
      return answer !== null;
    });
  };
  return { ...run, listening };
}

/** Writes records in small transactions (some changing earlier ones) until `stop` resolves; answers when done. */
async function writeRecords(rand: () => number, until: { done: boolean }): Promise<void> {
  let rawId = 1;
  while (!until.done) {
    const n = 1 + Math.floor(rand() * 6);
    await insertRows(
      testDb.database.db,
      Array.from({ length: n }, () => ({ rawId: rawId++ })),
    );
    if (rand() < 0.3) {
      const changed = 1 + Math.floor(rand() * (rawId - 1));
      await testDb.database.db.execute(
        sql`UPDATE ledger_transactions SET status = 'packaged' WHERE raw_id = ${changed} AND status <> 'packaged'`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20 + rand() * 80));
  }
}

/** Every position the feed holds (all of it is kept here). */
async function feedPositions(): Promise<number[]> {
  const positions: number[] = [];
  for (let at = 0; ; ) {
    const page = await readFeedPage(testDb.database, { after: at, limit: 1000 });
    assert.equal(page.kind, 'events');
    if (page.kind !== 'events' || page.events.length === 0) return positions;
    positions.push(...page.events.map((e) => e.position));
    at = page.position;
  }
}

/** Where a life is killed: while its receiver holds a batch, right after it answered one, or a little later. */
const KILL_PLANS = ['in flight', 'after the answer', 'between batches'] as const;
type KillPlan = (typeof KILL_PLANS)[number];

describe('the webhook sink killed at random points', () => {
  it('ends with every event of the feed, repeating only a cut try and the batch in flight at a kill', async () => {
    // Apart, so the records written do not change with the deliveries' timing.
    const [writes, kills, drops] = [random(SEED), random(SEED + 1), random(SEED + 2)];
    const context = `seed ${SEED} (TEST_SEED=${SEED} replays its choices)`;
    const lifeOf: number[] = [];
    // Each way of dying once, in an order of the seed's.
    const plans: KillPlan[] = [...KILL_PLANS].sort(() => kills() - 0.5);
    const writing = { done: false };
    const writer = writeRecords(writes, writing);
    for (const [life, plan] of plans.entries()) {
      const at = 1 + Math.floor(kills() * 3);
      const run = await startServe();
      serve = run;
      const kill = () => run.child.kill('SIGKILL');
      let seen = 0;
      let killing = false;
      receiver.setScript((_batch, index): ScriptedReply => {
        lifeOf[index] = life;
        seen += 1;
        if (!killing && seen >= at) {
          killing = true;
          if (plan === 'in flight') {
            kill();
            return { hang: true };
          }
          if (plan === 'after the answer') setImmediate(kill);
          else setTimeout(kill, 50 + kills() * 400);
        }
        return drops() < 0.15 ? { destroy: true } : {};
      });
      // A life that never gets its deliveries fails the test rather than hang it.
      const deadline = setTimeout(kill, 30_000);
      const ended = await run.done;
      clearTimeout(deadline);
      assert.ok(killing, `${context}: life ${life} got no delivery in 30 s`);
      assert.equal(
        ended.signal,
        'SIGKILL',
        `${context}: life ${life} ended by ${ended.code}: ${ended.stderr}`,
      );
    }
    // The last life delivers the rest and stops cleanly.
    receiver.setScript((_batch, index) => {
      lifeOf[index] = plans.length;
      return {};
    });
    const last = await startServe();
    serve = last;
    // Stopped below with SIGTERM, which must find it running, not still starting: the feed may be
    // delivered whole before it is (the life before delivered the rest).
    await last.listening();
    writing.done = true;
    await writer;
    const expected = await waitFor('the sink at the head', async () => {
      const feed = await readFeedStatus(testDb.database.db);
      const stamped = await queryRows<{ n: number }>(
        testDb.database.db,
        sql`SELECT count(*)::int AS n FROM ledger_feed_transactions WHERE last_position IS NULL`,
      );
      const sink = feed.sinks[0];
      return stamped[0]?.n === 0 && sink?.position === feed.head ? feedPositions() : null;
    });
    serve.child.kill('SIGTERM');
    const stopped = await serve.done;
    assert.equal(stopped.code, 0, stopped.stderr);

    const received = receiver.received;
    assert.ok(
      received.every((b) => b.verified),
      'every delivery signed',
    );
    // Nothing missed, nothing that is not in the feed.
    const acknowledged = new Set(positionsOf(receiver.acknowledged));
    assert.deepEqual(
      [...acknowledged].sort((a, b) => a - b),
      expected,
      `${context}: the feed, delivered`,
    );
    // Repeats: within a life only a try cut short again; across a kill only the last batch the killed life received.
    for (let i = 1; i < received.length; i++) {
      const [previous, batch] = [received[i - 1] as ReceivedBatch, received[i] as ReceivedBatch];
      const sameLife = lifeOf[i] === lifeOf[i - 1];
      const where = `${context}, plans ${plans.join(', ')}: delivery ${i} (life ${lifeOf[i]}) [${batch.first}, ${batch.last}] after [${previous.first}, ${previous.last}]`;
      if (sameLife && batch.first === previous.first) {
        assert.ok(!receiver.acknowledged.includes(previous), `${where}: sent again though acknowledged`);
        assert.equal(batch.body, previous.body, `${where}: a try again is the same batch`);
      } else if (sameLife) {
        assert.ok(batch.first > previous.last, `${where}: overlaps the one before`);
      } else {
        // (Nothing is skipped: the positions acknowledged are the feed's, above.)
        assert.ok(batch.first >= previous.first, `${where}: repeats more than the batch in flight`);
      }
    }
    const lives = new Set(lifeOf);
    assert.equal(lives.size, plans.length + 1, `${context}: every life delivered`);
    const [row] = await queryRows<{ lease_owner: string | null }>(
      testDb.database.db,
      sql`SELECT lease_owner FROM feed_sinks WHERE name = 'webhook'`,
    );
    assert.equal(row?.lease_owner, null, 'the clean stop let go of the lease');
  });
});
