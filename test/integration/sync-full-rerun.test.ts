/**
 * `sync --full` killed midway, then `sync --full` again, in both dialects: the second run walks
 * the whole list from its start and ends equal to the service. Its first commit follows on from
 * the checkpoint the killed run left, which it does not continue (it was refused as a commit lost
 * by the database, and every later `--full` run with it).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

const simulators: Simulator[] = [];
const databases: TestDatabase[] = [];
after(async () => {
  for (const sim of simulators) await sim.close();
  for (const db of databases) await db.drop();
});

/** The global list's walk in progress: its next page and its cursor, `null` when none. */
async function storedWalk(database: Database): Promise<{ nextPage: number; cursor: number | null } | null> {
  const [row] = await queryRows<{ next_page: string | null; cursor: string | null }>(
    database.db,
    sql`SELECT walk->>'nextPage' AS next_page, walk->>'cursor' AS cursor FROM sync_streams WHERE key = 'txs'`,
  );
  if (row === undefined || (row.next_page === null && row.cursor === null)) return null;
  return { nextPage: Number(row.next_page ?? 1), cursor: row.cursor === null ? null : Number(row.cursor) };
}

for (const paging of ['key', 'page'] as const) {
  describe(`sync --full by ${paging} after a killed sync --full`, () => {
    it('walks the whole list again from its start and ends equal to the service', async () => {
      const sim = createSimulator({ records: 5000, seed: 57, paging, faults: { latencyMs: 5 } });
      simulators.push(sim);
      const { url } = await sim.listen();
      const testDb = await createTestDatabase();
      databases.push(testDb);
      const env = {
        LEDGER_BASE_URL: url,
        DATABASE_URL: testDb.url,
        LEDGER_REQUESTS_PER_SECOND: '0',
        LEDGER_PAGING: paging,
        // Twenty records an answer by key: 250 answers, like the 500 pages by number.
        LEDGER_PAGE_COUNT: '20',
        // One writer: the stream's checkpoint moves with every commit (with more, about every
        // second), so the kill lands while the walk is under way.
        LEDGER_WRITERS: '1',
        LOG_LEVEL: 'warn',
      };
      const first = await runCli(['sync'], env).done;
      assert.equal(first.code, 0, first.stderr.slice(-1000));

      const killed = runCli(['sync', '--full'], env);
      const walked = await waitFor(
        'the full walk to store a checkpoint past its start',
        async () => {
          const walk = await storedWalk(testDb.database);
          return walk !== null && (paging === 'key' ? walk.cursor !== null : walk.nextPage >= 5)
            ? walk
            : undefined;
        },
        { timeoutMs: 60_000, everyMs: 5 },
      );
      killed.child.kill('SIGKILL');
      assert.equal((await killed.done).signal, 'SIGKILL', 'killed midway');
      const left = await storedWalk(testDb.database);
      assert.ok(left !== null, `the killed walk left its checkpoint (${JSON.stringify(walked)})`);

      sim.addRecords(40);
      sim.settleAll();
      const before = paging === 'key' ? sim.listRequests().keyRequests : sim.listRequests().pageRequests;
      const again = await runCli(['sync', '--full'], env).done;
      assert.equal(again.code, 0, again.stderr.slice(-1000));
      const requests =
        (paging === 'key' ? sim.listRequests().keyRequests : sim.listRequests().pageRequests) - before;
      const whole = Math.ceil(sim.count() / (paging === 'key' ? 20 : 10));
      assert.ok(requests >= whole, `${requests} list requests: the whole list of ${whole} again`);
      assert.equal(await storedWalk(testDb.database), null, 'the walk ended');
      await assertMirrorsTruth(testDb.database.db, sim);
    });
  });
}

/** The proofs a repair (`sync --full` in lanes) committed so far, and whether it is still running. */
async function repairProgress(database: Database): Promise<{ proofs: number; running: boolean }> {
  const [row] = await queryRows<{ proofs: number; running: boolean }>(
    database.db,
    sql`SELECT (SELECT count(*) FROM backfill_proven_ranges p JOIN backfill_runs r ON r.id = p.backfill_id
                 WHERE r.floor_raw_id = -1)::int AS proofs,
               EXISTS (SELECT 1 FROM backfill_runs WHERE floor_raw_id = -1 AND status = 'running') AS running`,
  );
  return row ?? { proofs: 0, running: false };
}

for (const paging of ['key', 'page'] as const) {
  describe(`sync --full by ${paging} in lanes`, () => {
    it('reads the list again as a repair; killed midway, the next sync ends it, equal to the service', async () => {
      const sim = createSimulator({ records: 5000, seed: 58, paging, faults: { latencyMs: 20 } });
      simulators.push(sim);
      const { url } = await sim.listen();
      const testDb = await createTestDatabase();
      databases.push(testDb);
      const env = {
        LEDGER_BASE_URL: url,
        DATABASE_URL: testDb.url,
        LEDGER_REQUESTS_PER_SECOND: '0',
        LEDGER_PAGING: paging,
        LEDGER_PAGE_COUNT: '20',
        LEDGER_WRITERS: '3',
        LOG_LEVEL: 'warn',
      };
      const first = await runCli(['sync'], env).done;
      assert.equal(first.code, 0, first.stderr.slice(-1000));
      // Records the mirror lost (a row deleted by hand): the repair reads them again.
      const db = testDb.database.db;
      await db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id IN (17, 2500, 4990)`);

      const killed = runCli(['sync', '--full'], env);
      await waitFor(
        'the repair to commit a few proofs',
        async () => ((await repairProgress(testDb.database)).proofs >= 3 ? true : undefined),
        { timeoutMs: 60_000, everyMs: 5 },
      );
      killed.child.kill('SIGKILL');
      assert.equal((await killed.done).signal, 'SIGKILL', 'killed midway');
      assert.equal((await repairProgress(testDb.database)).running, true, 'the repair left running');

      sim.addRecords(40);
      sim.settleAll();
      const again = await runCli(['sync'], env).done;
      assert.equal(again.code, 0, again.stderr.slice(-1000));
      const runs = await queryRows<{ status: string }>(
        db,
        sql`SELECT status FROM backfill_runs WHERE floor_raw_id = -1`,
      );
      assert.deepEqual(
        runs.map((r) => r.status),
        ['done'],
        'one repair, ended by the next sync',
      );
      assert.equal(await storedWalk(testDb.database), null, 'no walk left in progress');
      await assertMirrorsTruth(db, sim);
    });
  });
}
