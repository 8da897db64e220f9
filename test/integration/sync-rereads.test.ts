import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { assertMirrorsTruth } from './sync-truth.js';

const RECHECK_AFTER_MS = 300;
let testDb: TestDatabase | undefined;
let simulator: Simulator | undefined;

after(async () => {
  await simulator?.close();
  await testDb?.drop();
});

/** One in-process sync with the re-read delay set as a user would set it. */
async function sync(url: string, database: Database) {
  const config = loadConfig({
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '4',
    LEDGER_RECHECK_AFTER_MS: String(RECHECK_AFTER_MS),
  });
  const ctx = await createContext({ config, logger: silentLogger(), database });
  try {
    return await syncOnce(ctx, {});
  } finally {
    await ctx.close();
  }
}

/** Requests the simulator served so far, by route. */
function served(sim: Simulator): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [route, byStatus] of Object.entries(sim.stats())) {
    counts[route] = Object.values(byStatus).reduce((a, b) => a + b, 0);
  }
  return counts;
}

/** Requests served since `before`, by route. */
function servedSince(sim: Simulator, before: Record<string, number>): Record<string, number> {
  const now = served(sim);
  return Object.fromEntries(Object.entries(now).map(([route, n]) => [route, n - (before[route] ?? 0)]));
}

describe('records that change after first sight', () => {
  it('a sync after the service settled ends equal to it, through list pages, each change in history once', async () => {
    // Records stay unsettled at the service until it settles them all at once. Page numbers: the
    // re-reads are counted in pages (by key: sync-key-dialect.test.ts).
    simulator = createSimulator({
      records: 400,
      seed: 17,
      paging: 'page',
      packageDelayMs: 3_600_000,
      burnTargetDelayMs: 3_600_000,
    });
    const { url } = await simulator.listen();
    testDb = await createTestDatabase();
    const { database } = testDb;
    await sync(url, database);
    const before = simulator.headRawId();
    simulator.addRecords(120);
    await sync(url, database);
    const unsettled = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM ledger_transactions WHERE raw_id > ${before} AND status <> 'packaged'`,
    );
    assert.equal(unsettled[0]?.n, 120, 'the new records are stored as the service showed them: not packaged');

    simulator.settleAll();
    await new Promise((resolve) => setTimeout(resolve, RECHECK_AFTER_MS + 50));
    const statsBefore = served(simulator);
    const result = await sync(url, database);
    await assertMirrorsTruth(database.db, simulator);
    const requests = servedSince(simulator, statsBefore);
    const byHash = Object.entries(requests)
      .filter(([route]) => route.includes('txsByHash'))
      .reduce((n, [, c]) => n + c, 0);
    const pages = Object.entries(requests)
      .filter(([route]) => /txs/.test(route) && !route.includes('txsByHash'))
      .reduce((n, [, c]) => n + c, 0);
    // The tail walk read the head pages (and the records on them); the re-read does the rest.
    const walked = (result.streams[0]?.pages ?? 0) * 10;
    assert.equal((result.reread?.checked ?? 0) + walked, 120, 'every unsettled record re-read once');
    assert.ok(
      byHash <= 2,
      `records near the head are re-read through pages, not one by one (${byHash} look-ups)`,
    );
    assert.ok(
      pages <= 12 + 2 + 3,
      `about one page per ten records (${pages} pages, ${JSON.stringify(requests)})`,
    );

    // History: confirmed when first seen, packaged once; another sync adds nothing.
    await new Promise((resolve) => setTimeout(resolve, RECHECK_AFTER_MS + 50));
    await sync(url, database);
    const history = await queryRows<{ raw_id: string; statuses: string }>(
      database.db,
      sql`SELECT raw_id::text AS raw_id, string_agg(status, ',' ORDER BY observed_at, status) AS statuses
          FROM ledger_tx_status_history WHERE raw_id > ${before} GROUP BY raw_id`,
    );
    assert.equal(history.length, 120);
    const shapes = new Set(history.map((h) => h.statuses));
    assert.deepEqual([...shapes], ['confirmed,packaged']);
    const startsElsewhere = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM ledger_transactions t WHERE t.raw_id > ${before}
          AND t.first_seen_at IS DISTINCT FROM (SELECT min(h.observed_at) FROM ledger_tx_status_history h WHERE h.raw_id = t.raw_id)`,
    );
    assert.equal(startsElsewhere[0]?.n, 0, 'each history starts at the first sighting');
    const queued = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM ledger_tx_rechecks`,
    );
    assert.equal(queued[0]?.n, 0, 'nothing left to re-read');
  });
});
