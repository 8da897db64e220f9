import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { queryOne } from '../../src/db/rows.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { assertMirrorsTruth } from './sync-truth.js';

let simulator: Simulator;
let url: string;
let dataDir: string;
let database: Database;

before(async () => {
  simulator = createSimulator({ records: 800, seed: 41, arrivalsPerSecond: 100, packageDelayMs: 300 });
  ({ url } = await simulator.listen());
  dataDir = await mkdtemp(join(tmpdir(), 'ledger-indexer-sync-pglite-'));
  database = await openDatabase({ dataDir });
});

after(async () => {
  await database.close();
  await simulator.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function sync() {
  const config = loadConfig({
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_INDEXER_DATA_DIR: dataDir,
  });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    reread: { recheckAfterMs: 0 },
  });
  try {
    return await syncOnce(ctx);
  } finally {
    await ctx.close();
  }
}

describe('sync into the embedded database (PGlite)', () => {
  it('backfills while records arrive, tails, and ends equal to the service', async () => {
    const first = await sync();
    assert.equal(first.streams[0]?.mode, 'backfill');
    simulator.pauseArrivals();
    simulator.settleAll();
    const second = await sync();
    assert.equal(second.streams[0]?.mode, 'tail');
    await assertMirrorsTruth(database.db, simulator);
    const third = await sync();
    assert.equal(third.streams[0]?.counts.inserted, 0);
    assert.equal(third.streams[0]?.counts.updated, 0);
    const { n } = await queryOne<{ n: string }>(
      database.db,
      sql`SELECT count(*)::text AS n FROM ledger_tx_status_history WHERE status = 'confirmed'`,
    );
    assert.ok(Number(n) > 0, 'records first seen confirmed are in the history');
  });
});
