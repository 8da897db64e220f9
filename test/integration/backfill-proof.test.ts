import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createFetchPage } from '../../src/app/sync-adapters.js';
import { createLedgerClient, type LedgerClient } from '../../src/client/ledger-client.js';
import { createProofStore } from '../../src/db/proof-store.js';
import { queryRows } from '../../src/db/rows.js';
import { createPgStore } from '../../src/db/store.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { checkBackfill, fetchRange, planBackfill } from '../../src/sync/parallel-backfill.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

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
