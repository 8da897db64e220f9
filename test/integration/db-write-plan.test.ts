import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { claimDueQuery } from '../../src/db/stores/reread-store.js';
import { prepareBatch } from '../../src/db/write/prepare-batch.js';
import { DEFAULT_REREAD_POLICY } from '../../src/db/write/reread-queue.js';
import { buildRereadWrite } from '../../src/db/write/reread-write-sql.js';
import { createTestDatabase, makeLedgerTx, type TestDatabase } from '../helpers/database.js';

describe('page write plan', () => {
  let t: TestDatabase;

  before(async () => {
    t = await createTestDatabase();
  });
  after(async () => {
    await t?.drop();
  });

  it('looks bundle items up by key even while the table statistics lag behind a backfill', async () => {
    // Statistics as during a backfill: taken while the table was empty, then many items arrive.
    await t.database.db.execute(sql`ALTER TABLE ledger_bundle_items SET (autovacuum_enabled = false)`);
    await t.database.db.execute(sql`ANALYZE ledger_bundle_items`);
    await t.database.db.execute(sql`
      INSERT INTO ledger_bundle_items (raw_id, item_index, tag, chain_id, from_account, to_account, amount)
      SELECT n / 2, n % 2, 'x', '1', 'f' || n, 't', n FROM generate_series(2, 40001) AS n
    `);
    const data = JSON.stringify({
      bundle: {
        items: [
          { tag: 'x', chainID: '1', from: 'a', to: 'b', amount: '1' },
          { tag: 'x', chainID: '1', from: 'c', to: 'd', amount: '2' },
        ],
      },
    });
    const records = Array.from({ length: 160 }, (_, i) =>
      makeLedgerTx({ rawId: 100_000 + i, action: 'bundle', data }),
    );
    const now = new Date('2026-03-01T12:00:00Z');
    const batch = prepareBatch(records, { now, burnWindowMs: DEFAULT_REREAD_POLICY.burnWindowMs });
    assert.equal(batch.records.length, 160);
    const query = buildRereadWrite({ records: batch.records, now });
    const plan = (await queryRows<{ 'QUERY PLAN': string }>(t.database.db, sql`EXPLAIN ${query}`))
      .map((row) => row['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /ledger_bundle_items/);
    assert.doesNotMatch(plan, /Seq Scan on ledger_bundle_items/, plan);
  });

  it('ranks the re-reads it claims along the keys before the table has statistics', async () => {
    // As after a first backfill, before autovacuum's first ANALYZE: 30,000 records, 50 of them
    // waiting for a re-read. Planned as a scan that stops after the rank limit, each rank read
    // the table from its start, where a backfill leaves the newest records, as here.
    await t.database.db.execute(sql`ALTER TABLE ledger_transactions SET (autovacuum_enabled = false)`);
    const now = new Date('2026-03-01T12:00:00Z');
    const seed = prepareBatch([makeLedgerTx({ rawId: 30_001 })], { now, burnWindowMs: 0 });
    await t.database.db.execute(buildRereadWrite({ records: seed.records, now }));
    await t.database.db.execute(sql`
      INSERT INTO ledger_transactions
      SELECT (jsonb_populate_record(t, jsonb_build_object(
        'raw_id', n, 'record_id', 'r' || n, 'ledger_hash', 'h' || n,
        'action', CASE WHEN n % 20 = 0 THEN 'burn' ELSE 'transfer' END))).*
      FROM ledger_transactions t, generate_series(30000, 1, -1) AS n
      WHERE t.raw_id = 30001 ORDER BY n DESC
    `);
    await t.database.db.execute(sql`
      INSERT INTO ledger_tx_rechecks (raw_id, due_at) SELECT n, ${now.toISOString()}::timestamptz
      FROM generate_series(29951, 30000) AS n
    `);
    const query = claimDueQuery({
      limit: 1000,
      at: now,
      dueBy: now,
      rankLimit: 500,
      claimMs: 15_000,
      owner: null,
    });
    const plan = (await queryRows<{ 'QUERY PLAN': string }>(t.database.db, sql`EXPLAIN ${query}`))
      .map((row) => row['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /ledger_transactions_pkey/);
    assert.doesNotMatch(plan, /Seq Scan on ledger_transactions/, plan);
    // A burn's rank walks the burns above it, not every burn of the action index.
    assert.match(plan, /ledger_transactions_burn_idx/, plan);
    assert.doesNotMatch(plan, /ledger_transactions_action_time_idx/, plan);
  });
});
