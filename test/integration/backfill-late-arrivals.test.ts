/**
 * A parallel backfill of a service that shows some arriving records late: the range jobs read
 * the top of the list before those records are listed. The proven run must not let the tails
 * stop at its head: the first tail a window after that head reads again below it, and the mirror
 * ends equal to the service.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createFetchPage } from '../../src/app/sync-adapters.js';
import { createLedgerClient } from '../../src/client/ledger-client.js';
import { createBackfillStore } from '../../src/db/stores/pg-backfill-store.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import { createSimulator } from '../../src/simulator/index.js';
import { fetchRange, pageRepairTasks, planBackfill } from '../../src/sync/backfill/page-range.js';
import { checkBackfill } from '../../src/sync/backfill/run-check.js';
import { walkStream } from '../../src/sync/walk/walk-stream.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { assertMirrorsTruth } from './sync-truth.js';

const databases: TestDatabase[] = [];
after(async () => {
  for (const db of databases) await db.drop();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const WINDOW = 3000;

describe('a parallel backfill of a service that shows records late', () => {
  it('leaves the gaps it read too soon to the tails, which fetch the late records', async () => {
    const sim = createSimulator({
      records: 400,
      seed: 92,
      arrivalsPerSecond: 200,
      lateRate: 0.3,
      lateMs: 1500,
      // Records are final at first sight: the end state does not wait on re-read schedules.
      packageDelayMs: 0,
      burnTargetDelayMs: 0,
    });
    const { url } = await sim.listen();
    const t = await createTestDatabase();
    databases.push(t);
    const client = createLedgerClient({ baseUrl: url, requestsPerSecond: 0, retryMinMs: 10 });
    const fetchPage = createFetchPage(client);
    const store = createBackfillStore({ database: t.database });
    const syncStore = createPgStore({ database: t.database });
    try {
      // Records arrive for a second first, a third of them listed only 1.5 s later.
      await pause(1000);
      const plan = await planBackfill({ store, fetchPage, spec: {}, id: 'late', pagesPerRange: 8 });
      assert.ok(plan);
      const settle = { headAt: plan.run.headAt, windowMs: WINDOW };
      for (const task of plan.tasks)
        await fetchRange({ store, fetchPage, spec: {}, backfillId: 'late', task, settle });
      let outcome = await checkBackfill({ store, syncStore, spec: {}, backfillId: 'late', round: 0 });
      for (let round = 1; outcome.status === 'repair'; round++) {
        for (const task of await pageRepairTasks(store, outcome))
          await fetchRange({ store, fetchPage, spec: {}, backfillId: 'late', task, settle });
        outcome = await checkBackfill({ store, syncStore, spec: {}, backfillId: 'late', round });
      }
      assert.equal(outcome.status, 'done');
      sim.pauseArrivals();
      // The tail reads below its watermark once the backfill's head has waited a window.
      await pause(Math.max(2000, plan.run.headAt + WINDOW + 100 - Date.now()));
      const tail = await walkStream({
        store: syncStore,
        fetchPage,
        spec: {},
        owner: 'tail',
        settleMs: WINDOW,
      });
      assert.equal(tail.finished, true);
      await assertMirrorsTruth(t.database.db, sim);
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
