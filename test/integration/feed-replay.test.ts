/**
 * The change feed replayed from position 0 equals the tables: after real syncs of the simulator
 * (a first backfill, new records, records packaged and burns given their target-chain hash later
 * and re-read), folding the feed's events gives every row's tracked fields and, record by record,
 * its status history. And the COPY write path writes its events like the statements do.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { openHttpSurface } from '../../src/app/http-routes.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { prepareBatch } from '../../src/db/write/prepare-batch.js';
import { copyRangeWrite } from '../../src/db/write/range-copy.js';
import { DEFAULT_REREAD_POLICY } from '../../src/db/write/reread-queue.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import type { HttpSurface } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics/index.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { foldFeed } from '../helpers/feed.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import { waitFor } from '../helpers/wait-for.js';

const RECHECK_AFTER_MS = 300;
let testDb: TestDatabase | undefined;
let simulator: Simulator | undefined;
let surface: HttpSurface | undefined;
let serviceUrl = '';
const stop = new AbortController();

after(async () => {
  stop.abort();
  await surface?.close();
  await simulator?.close();
  await testDb?.drop();
});

async function sync(url: string, database: Database, accounts: string[] = []) {
  const config = loadConfig({
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '4',
    LEDGER_RECHECK_AFTER_MS: String(RECHECK_AFTER_MS),
  });
  const ctx = await createContext({ config, logger: silentLogger(), database });
  try {
    return await syncOnce(ctx, { accounts });
  } finally {
    await ctx.close();
  }
}

/** The whole feed from position 0, by long polls of at most 1000 events, until it reaches the head. */
async function replay(base: string, from = 0): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let position = from;
  for (;;) {
    const answer = await fetch(`${base}/feed?after=${position}&limit=1000`);
    assert.equal(answer.status, 200);
    const page = (await answer.json()) as { events: FeedEvent[]; position: number; head: number };
    for (const event of page.events) {
      assert.ok(event.position > position, 'positions grow');
      position = event.position;
      events.push(event);
    }
    position = page.position;
    if (page.events.length === 0 && position >= page.head) return events;
  }
}

interface Row {
  raw_id: string;
  status: string;
  internal_status: string;
  target_chain_tx_hash: string;
  express: unknown;
}

async function tableState(database: Database) {
  const rows = await queryRows<Row>(
    database.db,
    sql`SELECT raw_id::text, status, internal_status, target_chain_tx_hash,
      jsonb_build_object('chainTxHash', express_chain_tx_hash, 'withdrawFee', express_withdraw_fee,
        'refundLedgerHash', express_refund_ledger_hash, 'err', express_err) AS express
    FROM ledger_transactions ORDER BY raw_id`,
  );
  const history = await queryRows<{ raw_id: string; status: string; internal_status: string }>(
    database.db,
    sql`SELECT raw_id::text, status, internal_status FROM ledger_tx_status_history ORDER BY raw_id, id`,
  );
  const byRecord = new Map<number, [string, string][]>();
  for (const h of history) {
    const list = byRecord.get(Number(h.raw_id)) ?? [];
    list.push([h.status, h.internal_status]);
    byRecord.set(Number(h.raw_id), list);
  }
  return { rows, byRecord };
}

/** Replays the feed from 0 and compares it with the tables: every row's tracked fields, every record's history. */
async function assertReplayEqualsTables(base: string, database: Database): Promise<void> {
  const events = await replay(base);
  const { rows, byRecord } = await tableState(database);
  const folded = foldFeed(events);
  assert.equal(folded.size, rows.length, 'one stored event per row');
  const changes = events.filter((e) => e.kind === 'changed');
  assert.ok(changes.length >= 150, `records changed after first sight (${changes.length} changes)`);
  for (const row of rows) {
    const record = folded.get(Number(row.raw_id));
    assert.ok(record, `rawId ${row.raw_id} is in the feed`);
    assert.deepEqual(
      {
        status: record.status,
        internalStatus: record.internalStatus,
        targetChainTxHash: record.targetChainTxHash,
        express: record.express,
      },
      {
        status: row.status,
        internalStatus: row.internal_status,
        targetChainTxHash: row.target_chain_tx_hash,
        express: row.express,
      },
      `rawId ${row.raw_id}: the feed's last values are the row's`,
    );
    // A record final when first stored and never changed has no history row: its one version is
    // its row (docs/design.md, "When a record is read again").
    const history = byRecord.get(Number(row.raw_id)) ?? [[row.status, row.internal_status]];
    assert.deepEqual(record.history, history, `rawId ${row.raw_id}: its history`);
  }
}

describe('the change feed replayed from position 0', () => {
  it('equals the rows and the status history after syncs with records that change', async () => {
    simulator = createSimulator({
      records: 1500,
      seed: 23,
      packageDelayMs: 3_600_000,
      burnTargetDelayMs: 3_600_000,
    });
    const { url } = await simulator.listen();
    serviceUrl = url;
    testDb = await createTestDatabase();
    const { database } = testDb;
    const config = loadConfig({ DATABASE_URL: testDb.url, LEDGER_BASE_URL: url });
    surface = await openHttpSurface({
      config,
      database,
      logger: silentLogger(),
      metrics: createMetrics(),
      port: 0,
      signal: stop.signal,
    });
    await sync(url, database);
    simulator.addRecords(150);
    await sync(url, database);
    simulator.settleAll();
    await new Promise((resolve) => setTimeout(resolve, RECHECK_AFTER_MS + 50));
    await sync(url, database);
    await assertReplayEqualsTables(surface.url, database);
  });

  it('equals them still after two syncs wrote at once (a global list and an account list, the same records), read throughout', async () => {
    assert.ok(testDb && simulator && surface);
    const { database } = testDb;
    const url = serviceUrl;
    const [busiest] = await queryRows<{ account: string }>(
      database.db,
      sql`SELECT from_account AS account FROM ledger_transactions GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
    );
    assert.ok(busiest);
    const base = surface.url;
    let running = true;
    let position = ((await (await fetch(`${base}/feed?after=now`)).json()) as { position: number }).position;
    const seen: FeedEvent[] = [];
    const reader = (async () => {
      while (running) {
        const page = (await (await fetch(`${base}/feed?after=${position}&wait=1s&limit=50`)).json()) as {
          events: FeedEvent[];
          position: number;
        };
        for (const event of page.events) {
          assert.ok(
            event.position > position,
            `never below a position seen: ${event.position} after ${position}`,
          );
          position = event.position;
          seen.push(event);
        }
        position = page.position;
      }
    })();
    for (let round = 0; round < 3; round++) {
      simulator.addRecords(200);
      if (round > 0) simulator.settleAll();
      await new Promise((resolve) => setTimeout(resolve, RECHECK_AFTER_MS + 50));
      await Promise.all([sync(url, database), sync(url, database, [busiest.account])]);
    }
    running = false;
    await reader;
    // The surface stamps positions after the commits (on their notification): the replay reads on
    // once every transaction has its position.
    await waitFor('every transaction given its position', async () => {
      const [row] = await queryRows<{ n: number }>(
        database.db,
        sql`SELECT count(*)::int AS n FROM ledger_feed_transactions WHERE last_position IS NULL`,
      );
      return row?.n === 0 ? true : undefined;
    });
    const rest = await replay(base, position);
    const all = [...seen, ...rest];
    assert.ok(all.filter((e) => e.kind === 'stored').length >= 600, 'the new records, each stored once');
    assert.ok(
      all.some((e) => e.kind === 'changed'),
      'and changes',
    );
    await assertReplayEqualsTables(base, database);
  });

  it('has the events of a range written by COPY, in the same transaction', async () => {
    assert.ok(testDb);
    const { database } = testDb;
    const withCopy = database.withCopyConnection;
    assert.ok(withCopy, 'PostgreSQL copies');
    const now = new Date();
    const txs = Array.from({ length: 300 }, (_, i) =>
      makeLedgerTx({ rawId: 10_000_000 + i, status: i % 2 === 0 ? 'confirmed' : 'packaged' }),
    );
    const prepared = prepareBatch(txs, { now, burnWindowMs: DEFAULT_REREAD_POLICY.burnWindowMs });
    const before = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM ledger_feed_transactions`,
    );
    await withCopy((connection) =>
      copyRangeWrite(connection, {
        now,
        policy: DEFAULT_REREAD_POLICY,
        range: {
          streamKey: 'txs',
          backfillId: 'copy-feed',
          owner: 'backfill:copy-feed',
          rejected: [],
          proven: [{ lo: 10_000_000, hi: 10_000_299, loPage: 1 }],
          openGap: null,
        },
        records: prepared.records,
      }),
    );
    const written = await queryRows<{ transactions: number; events: number; statuses: string[] }>(
      database.db,
      sql`SELECT count(DISTINCT e.xid)::int AS transactions, count(*)::int AS events,
        array_agg(DISTINCT e.status ORDER BY e.status) AS statuses
      FROM ledger_feed_events e WHERE e.raw_id >= 10000000`,
    );
    assert.deepEqual(written[0], { transactions: 1, events: 300, statuses: ['confirmed', 'packaged'] });
    const after = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM ledger_feed_transactions`,
    );
    assert.equal(after[0]?.n, (before[0]?.n ?? 0) + 1, 'one transaction row for the copy');
  });
});
