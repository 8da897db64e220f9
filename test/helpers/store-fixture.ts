import { after, before, beforeEach } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import type { LedgerTx } from '../../src/domain/model.js';
import type { PageCommit, StreamLease, SyncStore } from '../../src/sync/ports/sync-store.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import type { PageExtra } from './store-conformance.js';

export const MINUTE = 60_000;

/** What a store test works with; `t`, `store` and `clock` are fresh for each test. */
export interface StoreFixture {
  t: TestDatabase;
  store: SyncStore;
  /** The store's clock: move it to make leases expire or re-reads fall due. */
  clock: Date;
  q<T>(query: ReturnType<typeof sql>): Promise<T[]>;
  /** A ten-minute lease on the global list, or on an account's list, held by `runner-1`. */
  lease(account?: string): Promise<StreamLease>;
  /** A page commit of `records` under `lease` that leaves the walk and watermark unset. */
  page(lease: StreamLease, records: LedgerTx[], extra?: PageExtra): PageCommit;
}

/**
 * Registers the hooks of a store test file (inside its `describe`): one database for the file,
 * emptied before each test, and a store on a clock the test controls.
 */
export function useStoreFixture(): StoreFixture {
  const fixture = {
    q: <T>(query: ReturnType<typeof sql>) => queryRows<T>(fixture.t.database.db, query),
    lease: async (account?: string) =>
      (await fixture.store.acquireStream(account === undefined ? {} : { account }, 'runner-1', 10 * MINUTE))
        .lease,
    page: (lease: StreamLease, records: LedgerTx[], { page = 1, ...extra }: PageExtra = {}): PageCommit => ({
      lease,
      pages: [{ page, records }],
      rejected: [],
      walk: null,
      watermark: null,
      ...extra,
    }),
  } as StoreFixture;
  before(async () => {
    fixture.t = await createTestDatabase();
  });
  after(async () => {
    await fixture.t?.drop();
  });
  beforeEach(async () => {
    await fixture.t.database.db.execute(
      sql`TRUNCATE ledger_transactions, ledger_tx_status_history, ledger_bundle_items, ledger_tx_rechecks, ledger_tokens, sync_streams, sync_runs, rejected_records, ledger_tx_conflicts CASCADE`,
    );
    fixture.clock = new Date('2026-03-01T12:00:00Z');
    fixture.store = createPgStore({ database: fixture.t.database, now: () => fixture.clock });
  });
  return fixture;
}
