/**
 * `sync` by key killed with SIGKILL at random points of a backfill in lanes: after each kill,
 * every proven range holds exactly the service's records field by field (a proof never exists
 * without its records) and no watermark moved; the next run reads only what the proofs leave, and
 * the last one ends equal to the service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { withSeed } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth, expectedRow, storedRows, wellFormedTruth } from './sync-truth.js';

let simulator: Simulator;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  simulator = createSimulator({ records: 6000, seed: 23, paging: 'key', faults: { latencyMs: 5 } });
  const { url } = await simulator.listen();
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_WRITERS: '3',
    // Twenty records an answer: ranges of 2,000 rawIds (a hundred answers), three below the head.
    LEDGER_PAGE_COUNT: '20',
    LOG_LEVEL: 'warn',
  };
});

after(async () => {
  await simulator.close();
  await testDb.drop();
});

/** The proven ranges, merged as the check reads them. */
async function provenRanges(): Promise<Array<{ lo: number; hi: number }>> {
  const rows = await queryRows<{ lo: string; hi: string }>(
    testDb.database.db,
    sql`SELECT lo::text AS lo, hi::text AS hi FROM backfill_proven_ranges WHERE stream_key = 'txs' ORDER BY lo`,
  );
  return rows.map((r) => ({ lo: Number(r.lo), hi: Number(r.hi) }));
}

/** Every record the service lists inside a proven range is stored, field by field; nothing else is claimed. */
async function assertProofsHold(): Promise<number> {
  const ranges = await provenRanges();
  const stored = new Map((await storedRows(testDb.database.db)).map((row) => [Number(row.raw_id), row]));
  let covered = 0;
  for (const record of wellFormedTruth(simulator)) {
    if (!ranges.some((r) => r.lo <= record.rawId && record.rawId <= r.hi)) continue;
    covered++;
    assert.deepEqual(
      stored.get(record.rawId),
      expectedRow(record),
      `rawId ${record.rawId} inside a proven range`,
    );
  }
  const [stream] = await queryRows<{ watermark: string | null }>(
    testDb.database.db,
    sql`SELECT watermark::text AS watermark FROM sync_streams WHERE key = 'txs'`,
  );
  assert.equal(stream?.watermark ?? null, null, 'no watermark before the proofs reach the head');
  return covered;
}

describe('sync by key killed with SIGKILL during a backfill in lanes', () => {
  it('keeps every proof honest at each kill, reads only what proofs leave, and ends equal to the service', () =>
    withSeed(async (rng) => {
      let covered = 0;
      for (const share of [0.15 + rng.next() * 0.15, 0.45 + rng.next() * 0.2]) {
        const target = Math.floor(share * 6000);
        const run = runCli(['sync'], env);
        let finished = false;
        run.done.then(() => {
          finished = true;
        });
        await waitFor(
          `proofs covering ${target} rawIds`,
          async () => finished || (await provenRanges()).reduce((n, r) => n + (r.hi - r.lo + 1), 0) >= target,
          { timeoutMs: 60_000, everyMs: 10 },
        );
        run.child.kill('SIGKILL');
        const outcome = await run.done;
        assert.equal(
          outcome.signal,
          'SIGKILL',
          `the run ended before the kill: ${outcome.stderr.slice(-500)}`,
        );
        const now = await assertProofsHold();
        assert.ok(now >= covered, 'proofs only grow');
        covered = now;
      }
      const before = simulator.listRequests().keyRequests;
      const last = runCli(['sync'], env);
      const outcome = await last.done;
      assert.equal(outcome.code, 0, outcome.stderr.slice(-1000));
      await assertMirrorsTruth(testDb.database.db, simulator);
      // What the killed runs proved is not read again: the rest, twenty records an answer,
      // with a few requests for the head, the ranges' edges and the tail.
      const requests = simulator.listRequests().keyRequests - before;
      const left = Math.ceil((6000 - covered) / 20);
      assert.ok(requests <= left + 15, `${requests} requests for ${6000 - covered} records left`);
      const [run] = await queryRows<{ status: string }>(
        testDb.database.db,
        sql`SELECT status FROM backfill_runs`,
      );
      assert.equal(run?.status, 'done');
    }));
});
