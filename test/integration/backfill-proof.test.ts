import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { createFetchPage } from '../../src/app/sync-adapters.js';
import { createLedgerClient, type LedgerClient } from '../../src/client/ledger-client.js';
import { createProofStore } from '../../src/db/proof-store.js';
import { queryRows } from '../../src/db/rows.js';
import { createPgStore } from '../../src/db/store.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { backfillOwner, checkBackfill, fetchRange, planBackfill } from '../../src/sync/parallel-backfill.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

const RECORDS = 1000;

describe('a parallel backfill proven complete in PostgreSQL', () => {
  let t: TestDatabase;
  let sim: Simulator;
  let client: LedgerClient;
  before(async () => {
    t = await createTestDatabase();
    // No rawId holes and no arrivals: in-order ranges then join into one proof without repairs.
    sim = createSimulator({ records: RECORDS, seed: 3, holeRate: 0 });
    client = createLedgerClient({ baseUrl: (await sim.listen()).url, requestsPerSecond: 0 });
  });
  after(async () => {
    await client?.close();
    await sim?.close();
    await t?.drop();
  });

  const count = async (query: ReturnType<typeof sql>) =>
    Number((await queryRows<{ n: string }>(t.database.db, query))[0]?.n);

  it('keeps a handful of proven-range rows, not one per page, and counts no page for the watermark', async () => {
    const store = createProofStore({ database: t.database });
    const syncStore = createPgStore({ database: t.database });
    const fetchPage = createFetchPage(client);
    const plan = await planBackfill({ store, fetchPage, spec: {}, id: 'b1', pagesPerRange: 10 });
    assert.ok(plan);
    for (const task of plan.tasks) {
      await fetchRange({ store, fetchPage, spec: {}, backfillId: 'b1', task, pagesPerCommit: 1 });
    }
    const rowsBefore = await count(sql`select count(*)::text as n from backfill_proven_ranges`);
    assert.ok(rowsBefore >= RECORDS / 10, `a row per page committed (${rowsBefore})`);
    const proof = await store.provenRanges('txs');

    const outcome = await checkBackfill({
      store,
      syncStore,
      spec: {},
      backfillId: 'b1',
      round: 0,
    });
    assert.deepEqual(outcome, { status: 'done', watermark: RECORDS });

    assert.equal(await count(sql`select count(*)::text as n from backfill_proven_ranges`), proof.length);
    assert.ok(proof.length <= 2, `${proof.length} merged range(s)`);
    assert.deepEqual(await store.provenRanges('txs'), proof);
    // Moving the watermark is not a page of the stream's run.
    assert.equal(await count(sql`select sum(pages)::text as n from sync_runs where stream_key = 'txs'`), 0);
    assert.equal(await count(sql`select watermark::text as n from sync_streams where key = 'txs'`), RECORDS);
  });
});

describe("a parallel backfill's range commits and the stream lease", () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
  });
  after(async () => {
    await t?.drop();
  });

  it('renew the lease once a third of it has passed, and meanwhile never wait for the stream row', async () => {
    const leaseMs = 60_000;
    const start = new Date('2026-11-25T12:00:00.000Z');
    let clock = start;
    const syncStore = createPgStore({ database: t.database, now: () => clock });
    const store = createProofStore({ database: t.database, now: () => clock });
    await syncStore.acquireStream({}, backfillOwner('b2'), leaseMs);
    const expiresAt = async () =>
      (
        await queryRows<{ at: string }>(
          t.database.db,
          sql`select to_json(lease_expires_at)#>>'{}' as at from sync_streams where key = 'txs'`,
        )
      )[0]?.at;
    let page = 0;
    const commit = () => {
      page += 1;
      const record = makeLedgerTx({ rawId: page });
      return store.commitRangePage({
        key: 'txs',
        backfillId: 'b2',
        page,
        records: [record],
        rejected: [],
        proven: [{ lo: page, hi: page }],
      });
    };

    // Another session holds the stream row (as a range commit renewing the lease would until it
    // ends): a commit 19 s into the lease neither renews it nor waits for that session.
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM sync_streams WHERE key = 'txs' FOR UPDATE");
      clock = new Date(start.getTime() + 19_000);
      const outcome = await Promise.race([
        commit().then(() => 'committed'),
        new Promise((resolve) => setTimeout(resolve, 5_000, 'waited for the stream row')),
      ]);
      assert.equal(outcome, 'committed');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    assert.equal(await expiresAt(), '2026-11-25T12:01:00+00:00', 'not renewed before a third of it passed');

    clock = new Date(start.getTime() + 21_000);
    await commit();
    assert.equal(await expiresAt(), '2026-11-25T12:01:21+00:00', 'renewed once a third of it passed');
  });
});
