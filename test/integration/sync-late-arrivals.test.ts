/**
 * A service whose writes commit out of order: a tenth of the arriving records become visible
 * 1.5 s after records with higher rawIds. Repeated `sync` runs while records arrive, then a
 * settle and a last run a settling window later: the mirror holds every record, none lost below
 * a watermark, in both dialects. And a tail far behind, caught up and then synced more often
 * than the settling window: its stretch settles, and the runs after it read only what is new.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
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

/** 1,500 records, then arrivals of which a tenth show 1.5 s late, final at first sight (no re-read schedules to wait on). */
function lateArrivals(seed: number, arrivalsPerSecond: number) {
  return createSimulator({
    records: 1500,
    seed,
    arrivalsPerSecond,
    lateRate: 0.1,
    lateMs: 1500,
    packageDelayMs: 0,
    burnTargetDelayMs: 0,
  });
}

for (const paging of ['page', 'key'] as const) {
  describe(`records that become visible after records with higher rawIds, read ${paging === 'key' ? 'by key' : 'by page number'}`, () => {
    it('are all fetched by later runs: none is lost below a watermark', async () => {
      // By page number a request reads ten records: a hundred arrivals a second add ten pages a
      // second, more than a test process starved by the files beside it reads (a first backfill
      // chased its head for twelve minutes in a clean-clone CI on a loaded machine).
      const sim = lateArrivals(91, paging === 'page' ? 40 : 100);
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

describe('a tail far behind by key, then synced more often than the settling window', () => {
  it("settles the catch-up's stretch: the runs after it read only what may still fill and what is new", async () => {
    const sim = lateArrivals(92, 100);
    const { url } = await sim.listen();
    const t = await createTestDatabase();
    databases.push(t);
    const settledMark = async () => {
      const [row] = await queryRows<{ settled: string | null }>(
        t.database.db,
        sql`SELECT settled_raw_id::text AS settled FROM sync_streams WHERE key = 'txs'`,
      );
      return Number(row?.settled ?? -1);
    };
    try {
      await sync(url, t.database, { LEDGER_PAGING: 'key' });
      // Thirty answers above the settled mark: the next run catches up in lanes.
      sim.addRecords(3000);
      const caughtUp = await sync(url, t.database, { LEDGER_PAGING: 'key' });
      const head = caughtUp.streams[0]!.watermark!;
      // Each run begins within the window of the one before: a head waiting to settle is never a
      // window old when a run begins, and the heads must wait in turn rather than replace each other.
      let read = 0;
      for (let run = 0; run < 8; run++) {
        await pause(700);
        read = (await sync(url, t.database, { LEDGER_PAGING: 'key' })).streams[0]!.records;
      }
      assert.ok(
        (await settledMark()) > head,
        `settled at ${await settledMark()}, the catch-up's head ${head}`,
      );
      assert.ok(read < 1500, `the last run read ${read} records`);
    } finally {
      await sim.close();
    }
  });
});
