import { after, before } from 'node:test';
import { sql } from 'drizzle-orm';
import { createBackfillStore } from '../../src/db/stores/pg-backfill-store.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { storeConformance } from '../helpers/store-conformance.js';

let t: TestDatabase;
before(async () => {
  t = await createTestDatabase();
});
after(async () => {
  await t?.drop();
});

storeConformance('PostgreSQL store', async (now) => {
  await t.database.db.execute(
    sql`TRUNCATE ledger_transactions, ledger_tx_rechecks, sync_streams, sync_runs, rejected_records,
        backfill_runs, backfill_proven_ranges CASCADE`,
  );
  return {
    sync: createPgStore({ database: t.database, now }),
    backfill: createBackfillStore({ database: t.database, now }),
  };
});
