/**
 * A service whose writes commit out of order: a tenth of the arriving records become visible
 * 1.5 s after records with higher rawIds. Repeated `sync` runs while records arrive, then a
 * settle and a last run a settling window later: the mirror holds every record, none lost below
 * a watermark, in both dialects.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createContext } from '../../src/app/context.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { SETTLE_MS } from '../../src/defaults.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { assertMirrorsTruth } from './sync-truth.js';

const databases: TestDatabase[] = [];
after(async () => {
  for (const db of databases) await db.drop();
});

async function sync(url: string, database: Database, env: Record<string, string> = {}) {
  const config = loadConfig({
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RETRY_MIN_MS: '10',
    ...env,
  });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    reread: { recheckAfterMs: 0 },
  });
  try {
    return await syncOnce(ctx, {});
  } finally {
    await ctx.close();
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const paging of ['page', 'key'] as const) {
  describe(`records that become visible after records with higher rawIds, read ${paging === 'key' ? 'by key' : 'by page number'}`, () => {
    it('are all fetched by later runs: none is lost below a watermark', async () => {
      const sim = createSimulator({
        records: 1500,
        seed: 91,
        arrivalsPerSecond: 100,
        lateRate: 0.1,
        lateMs: 1500,
        // Records are final at first sight: the end state does not wait on re-read schedules.
        packageDelayMs: 0,
        burnTargetDelayMs: 0,
      });
      const { url } = await sim.listen();
      const t = await createTestDatabase();
      databases.push(t);
      try {
        for (let run = 0; run < 6; run++) {
          const result = await sync(url, t.database, { LEDGER_PAGING: paging });
          assert.equal(result.streams[0]?.finished, true);
          assert.equal(result.streams[0]?.dialect, paging);
          await pause(700);
        }
        // Arrivals stop; the last late records show once their 1.5 s are over, and the last run
        // begins a settling window (3 s) after the run before saw its head.
        sim.pauseArrivals();
        await pause(SETTLE_MS + 200);
        await sync(url, t.database, { LEDGER_PAGING: paging });
        await assertMirrorsTruth(t.database.db, sim);
      } finally {
        await sim.close();
      }
    });
  });
}
