/**
 * `sync` killed with SIGKILL at random points of a backfill in lanes, by key and by page number:
 * after each kill,
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

/** Per dialect: the records an answer, and the service's settings. */
const DIALECTS = {
  // Twenty records an answer: ranges of 2,000 rawIds (a hundred answers), three below the head.
  key: { perAnswer: 20, env: { LEDGER_PAGE_COUNT: '20' } },
  // Ten a page: 600 pages, ranges of 32 pages.
  page: { perAnswer: 10, env: {} },
} as const;

after(async () => {
  await testDb?.drop();
});

/** List requests the simulator served, in its dialect. */
function listRequests(): number {
  const served = simulator.listRequests();
  return served.keyRequests + served.pageRequests;
}

/** The gaps the proven ranges leave below the run's head. */
async function gapsLeft(): Promise<number> {
  const ranges = await provenRanges();
  const [run] = await queryRows<{ head: string }>(
    testDb.database.db,
    sql`SELECT head_raw_id::text AS head FROM backfill_runs`,
  );
  let gaps = 0;
  let reach = -1;
  for (const r of ranges) {
    if (r.lo > reach + 1) gaps++;
    reach = Math.max(reach, r.hi);
  }
  return gaps + (reach < Number(run?.head ?? 0) ? 1 : 0);
}

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

for (const paging of ['key', 'page'] as const) {
  describe(`sync by ${paging} killed with SIGKILL during a backfill in lanes`, () => {
    let env: Record<string, string>;
    before(async () => {
      await simulator?.close();
      await testDb?.drop();
      simulator = createSimulator({ records: 6000, seed: 23, paging, faults: { latencyMs: 5 } });
      const { url } = await simulator.listen();
      testDb = await createTestDatabase();
      env = {
        LEDGER_BASE_URL: url,
        DATABASE_URL: testDb.url,
        LEDGER_REQUESTS_PER_SECOND: '0',
        LEDGER_WRITERS: '3',
        LOG_LEVEL: 'warn',
        ...DIALECTS[paging].env,
      };
    });
    after(async () => {
      await simulator.close();
    });

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
            async () =>
              finished || (await provenRanges()).reduce((n, r) => n + (r.hi - r.lo + 1), 0) >= target,
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
        const requestsBefore = listRequests();
        const gaps = await gapsLeft();
        const last = runCli(['sync'], env);
        const outcome = await last.done;
        assert.equal(outcome.code, 0, outcome.stderr.slice(-1000));
        await assertMirrorsTruth(testDb.database.db, simulator);
        // What the killed runs proved is not read again: the rest, by key with a few requests for
        // the head, the ranges' edges and the tail; by page number each gap walked from a page
        // above it (found by probing), so a few pages more a gap.
        const requests = listRequests() - requestsBefore;
        const left = Math.ceil((6000 - covered) / DIALECTS[paging].perAnswer);
        const slack = paging === 'key' ? 15 : 15 + 16 * gaps;
        assert.ok(
          requests <= left + slack,
          `${requests} requests for ${6000 - covered} records left in ${gaps} gap(s)`,
        );
        const [run] = await queryRows<{ status: string }>(
          testDb.database.db,
          sql`SELECT status FROM backfill_runs`,
        );
        assert.equal(run?.status, 'done');
      }));
  });
}
