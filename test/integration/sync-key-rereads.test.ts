/**
 * Re-reads by key of burns waiting for their target-chain hash: they lie spread down the global
 * list (one record in seven), close together in the burn list, which the re-read reads instead.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createContext } from '../../src/app/context.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { assertMirrorsTruth } from './sync-truth.js';

let testDb: TestDatabase | undefined;
let simulator: Simulator | undefined;
after(async () => {
  await simulator?.close();
  await testDb?.drop();
});

async function sync(url: string, database: Database) {
  const config = loadConfig({ LEDGER_BASE_URL: url, LEDGER_REQUESTS_PER_SECOND: '0' });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    recheck: { recheckAfterMs: 0 },
  });
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

describe('burns waiting for their target-chain hash, re-read by key', () => {
  it('are re-read through the burn list: one answer for all of them, none looked up', async () => {
    // The history is settled; the records arriving for a second wait, burns for their hash.
    simulator = createSimulator({
      records: 300,
      seed: 63,
      paging: 'key',
      holeRate: 0,
      packageDelayMs: 0,
      burnTargetDelayMs: 3_600_000,
    });
    const { url } = await simulator.listen();
    testDb = await createTestDatabase();
    const { database } = testDb;
    // Five hundred arrivals, added at once: a count the clock does not decide (at a rate, a slow
    // machine let more than a hundred burns arrive, two answers of the burn list).
    simulator.addRecords(500);
    const first = await sync(url, database);
    simulator.settleAll();
    const before = served(simulator);
    const listsBefore = simulator.listRequests().keyRequests;
    const { reread, streams } = await sync(url, database);
    assert.ok(reread, 're-read');
    // The tail's one answer re-reads the newest hundred; the burns below them, some sixty spread
    // over five hundred records of the global list, are one answer of the burn list.
    assert.ok(
      reread.checked >= 40,
      `${reread.checked} burns re-read after the walk (${JSON.stringify(first.streams[0])})`,
    );
    assert.equal(reread.requests, 1, JSON.stringify(reread));
    assert.equal(reread.viaPages, reread.checked);
    const byHash = served(simulator)['GET /txsByHash/{ledgerHash}'] ?? 0;
    assert.equal(byHash - (before['GET /txsByHash/{ledgerHash}'] ?? 0), 0, 'none looked up');
    assert.equal(simulator.listRequests().keyRequests - listsBefore, (streams[0]?.pages ?? 0) + 1);
    await assertMirrorsTruth(database.db, simulator);
  });
});
