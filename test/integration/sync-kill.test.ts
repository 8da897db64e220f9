import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { withSeed } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';
import { pagesCommitted } from '../helpers/walk-progress.js';
import { readNextPage, runCli } from './sync-cli-run.js';
import { assertMirrorsPages, assertMirrorsTruth } from './sync-truth.js';

let simulator: Simulator;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  // Page numbers: the mirror is checked against the pages committed at each kill.
  simulator = createSimulator({ records: 4000, seed: 21, paging: 'page', faults: { latencyMs: 8 } });
  const { url } = await simulator.listen();
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '4',
    // One writer: the first backfill is the walk, whose checkpoint this test follows (a backfill
    // in lanes is killed in sync-kill-lanes.test.ts).
    LEDGER_WRITERS: '1',
    LOG_LEVEL: 'warn',
  };
});

after(async () => {
  await simulator.close();
  await testDb.drop();
});

/**
 * After a kill, the table holds, field by field, exactly the records of the pages whose commits
 * went in: pages 1 to the stream's checkpoint. A page and its checkpoint commit together.
 */
async function assertCommittedPages(): Promise<void> {
  // One snapshot for all reads: a COMMIT the killed process sent just before it died may still
  // land on the server between two separate reads.
  await testDb.database.db.transaction(
    async (tx) => {
      const nextPage = (await readNextPage({ db: tx })) ?? 1;
      const pages = new Set(Array.from({ length: nextPage - 1 }, (_, i) => i + 1));
      await assertMirrorsPages(tx, simulator, pages);
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

describe('sync killed with SIGKILL at random points', () => {
  it('resumes from its checkpoint, holding exactly the pages it committed at every kill, and ends equal to the service', () =>
    withSeed(async (rng) => {
      // First kill at a random moment, possibly before the walk began; then kills mid-walk at
      // random checkpoints further and further on.
      const early = runCli(['sync'], env);
      await new Promise((resolve) => setTimeout(resolve, rng.int(200, 1700)));
      early.child.kill('SIGKILL');
      assert.equal((await early.done).signal, 'SIGKILL');
      await assertCommittedPages();

      let previous = (await readNextPage(testDb.database)) ?? 1;
      for (const share of [0.2 + rng.next() * 0.15, 0.45 + rng.next() * 0.15, 0.75 + rng.next() * 0.1]) {
        const target = Math.floor(share * 400);
        const run = runCli(['sync'], env);
        let finished = false;
        run.done.then(() => {
          finished = true;
        });
        await waitFor(
          `commits past page ${target}`,
          async () => finished || (await pagesCommitted(testDb.database.db)) >= target,
        );
        run.child.kill('SIGKILL');
        const outcome = await run.done;
        assert.equal(outcome.signal, 'SIGKILL', `killed mid-walk (stderr: ${outcome.stderr.slice(-300)})`);
        const now = await readNextPage(testDb.database);
        assert.ok(
          now !== null && now >= previous,
          `the checkpoint only moves forward (${previous} → ${now})`,
        );
        previous = now;
        await assertCommittedPages();
      }

      const last = runCli(['sync'], env);
      const outcome = await last.done;
      assert.equal(outcome.code, 0, outcome.stderr.slice(-500));
      assert.match(outcome.stdout, /txs: backfill, \d+ pages, .*up to date/);
      assert.equal(await readNextPage(testDb.database), null, 'the walk is finished');
      await assertMirrorsTruth(testDb.database.db, simulator);
    }));
});
