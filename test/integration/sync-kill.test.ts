import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait-for.js';
import { readNextPage, runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

let simulator: Simulator;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  simulator = createSimulator({ records: 4000, seed: 21, faults: { latencyMs: 8 } });
  const { url } = await simulator.listen();
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '4',
    LOG_LEVEL: 'warn',
  };
});

after(async () => {
  await simulator.close();
  await testDb.drop();
});

async function duplicates(): Promise<number> {
  const [row] = await queryRows<{ n: string }>(
    testDb.database.db,
    sql`SELECT (count(*) - count(DISTINCT ledger_hash))::text AS n FROM ledger_transactions`,
  );
  return Number(row?.n ?? 0);
}

describe('sync killed with SIGKILL at random points', () => {
  it('resumes from its checkpoint and ends equal to the service, without duplicates', async () => {
    // First kill at a random moment, possibly before the walk began; then kills mid-walk at
    // random checkpoints further and further on.
    const early = runCli(['sync'], env);
    await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 1500));
    early.child.kill('SIGKILL');
    assert.equal((await early.done).signal, 'SIGKILL');

    let previous = (await readNextPage(testDb.database)) ?? 1;
    for (const share of [
      0.2 + Math.random() * 0.15,
      0.45 + Math.random() * 0.15,
      0.75 + Math.random() * 0.1,
    ]) {
      const target = Math.floor(share * 400);
      const run = runCli(['sync'], env);
      let finished = false;
      run.done.then(() => {
        finished = true;
      });
      await waitFor(
        `checkpoint past page ${target}`,
        async () => finished || ((await readNextPage(testDb.database)) ?? 0) >= target,
      );
      run.child.kill('SIGKILL');
      const outcome = await run.done;
      assert.equal(outcome.signal, 'SIGKILL', `killed mid-walk (stderr: ${outcome.stderr.slice(-300)})`);
      const now = await readNextPage(testDb.database);
      assert.ok(now !== null && now >= previous, `the checkpoint only moves forward (${previous} → ${now})`);
      previous = now;
      assert.equal(await duplicates(), 0);
    }

    const last = runCli(['sync'], env);
    const outcome = await last.done;
    assert.equal(outcome.code, 0, outcome.stderr.slice(-500));
    assert.match(outcome.stdout, /txs: backfill, \d+ pages, .*up to date/);
    assert.equal(await readNextPage(testDb.database), null, 'the walk is finished');
    await assertMirrorsTruth(testDb.database.db, simulator);
  });
});
