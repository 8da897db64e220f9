/**
 * `sync` by key of a mirror far behind the service (a scheduled job that missed its runs): the
 * stretch above the stream's settled mark is read in lanes as a catch-up run, each range proven as
 * it commits, records shown late included. One killed with SIGKILL in the middle moves no
 * watermark and is taken over by the next run, which reads only what its proofs leave; the runs
 * end equal to the service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth, wellFormedTruth } from './sync-truth.js';

/** Twenty records an answer: a stretch of more than 1,000 rawIds (fifty answers) is caught up in lanes. */
const PER_ANSWER = 20;
const HISTORY = 2000;
const ADDED = 6000;
/** Late records stay out of the lists this long; the settling window is as long. */
const LATE_MS = 400;

let simulator: Simulator;
let testDb: TestDatabase;

interface RunRow {
  id: string;
  floor: string | null;
  head: string;
  status: string;
}

async function runs(): Promise<RunRow[]> {
  return queryRows<RunRow>(
    testDb.database.db,
    sql`SELECT id, floor_raw_id::text AS floor, head_raw_id::text AS head, status
        FROM backfill_runs ORDER BY created_at`,
  );
}

async function stream(): Promise<{ watermark: number; settled: number }> {
  const [row] = await queryRows<{ watermark: string; settled: string }>(
    testDb.database.db,
    sql`SELECT watermark::text AS watermark, settled_raw_id::text AS settled FROM sync_streams WHERE key = 'txs'`,
  );
  return { watermark: Number(row?.watermark), settled: Number(row?.settled) };
}

/** RawIds the run `id` proved so far. */
async function provenBy(id: string): Promise<number> {
  const [row] = await queryRows<{ n: string | null }>(
    testDb.database.db,
    sql`SELECT sum(hi - lo + 1)::text AS n FROM backfill_proven_ranges WHERE backfill_id = ${id}`,
  );
  return Number(row?.n ?? 0);
}

/** The stretches of the run's span (above its floor, up to its head) that its proofs leave. */
async function gapsOf(run: RunRow): Promise<number> {
  const rows = await queryRows<{ lo: string; hi: string }>(
    testDb.database.db,
    sql`SELECT lo::text AS lo, hi::text AS hi FROM backfill_proven_ranges
        WHERE backfill_id = ${run.id} ORDER BY lo`,
  );
  let gaps = 0;
  let reach = Number(run.floor);
  for (const { lo, hi } of rows) {
    if (Number(lo) > reach + 1) gaps++;
    reach = Math.max(reach, Number(hi));
  }
  return gaps + (reach < Number(run.head) ? 1 : 0);
}

function listRequests(): number {
  const served = simulator.listRequests();
  return served.keyRequests + served.pageRequests;
}

describe('sync by key far behind the service', () => {
  let env: Record<string, string>;
  before(async () => {
    simulator = createSimulator({
      records: HISTORY,
      seed: 31,
      paging: 'key',
      lateRate: 0.05,
      lateMs: LATE_MS,
      // Final as they arrive: a status change landing between the last run and the comparison
      // (a burn's hash 7 s after it arrived, about when this test ends) is a re-read's to catch.
      packageDelayMs: 0,
      burnTargetDelayMs: 0,
      faults: { latencyMs: 5 },
    });
    const { url } = await simulator.listen();
    testDb = await createTestDatabase();
    env = {
      LEDGER_BASE_URL: url,
      DATABASE_URL: testDb.url,
      LEDGER_REQUESTS_PER_SECOND: '0',
      LEDGER_PAGE_COUNT: String(PER_ANSWER),
      LEDGER_SETTLE_MS: String(LATE_MS),
      LOG_LEVEL: 'warn',
    };
  });
  after(async () => {
    await simulator?.close();
    await testDb?.drop();
  });

  it('reads the stretch in lanes as a run of its own, taken over after a kill, and ends equal to the service', async () => {
    const first = await runCli(['sync'], env).done;
    assert.equal(first.code, 0, first.stderr.slice(-1000));
    await new Promise((resolve) => setTimeout(resolve, 2 * LATE_MS));
    const settledFirst = await runCli(['sync'], env).done;
    assert.equal(settledFirst.code, 0, settledFirst.stderr.slice(-1000));
    const before = await stream();
    assert.equal(before.settled, before.watermark, 'the history settled');
    assert.equal((await runs()).length, 1, 'the first backfill');

    await simulator.addRecords(ADDED);
    const killed = runCli(['sync'], env);
    let finished = false;
    killed.done.then(() => {
      finished = true;
    });
    let catchUp: RunRow | undefined;
    await waitFor(
      'a catch-up that proved a quarter of the stretch',
      async () => {
        catchUp ??= (await runs()).find((r) => r.floor !== null);
        return finished || (catchUp !== undefined && (await provenBy(catchUp.id)) >= ADDED / 4);
      },
      { timeoutMs: 60_000, everyMs: 10 },
    );
    killed.child.kill('SIGKILL');
    const outcome = await killed.done;
    assert.equal(outcome.signal, 'SIGKILL', `the run ended before the kill: ${outcome.stderr.slice(-500)}`);
    assert.ok(catchUp, 'a catch-up run was planned');
    assert.equal(Number(catchUp.floor), before.settled, 'it begins at the settled mark');
    assert.ok(Number(catchUp.head) > before.watermark + ADDED / 2, 'it ends at the head the tail saw');
    assert.equal((await stream()).watermark, before.watermark, 'no watermark past unproven stretches');

    const proven = await provenBy(catchUp.id);
    const gaps = await gapsOf(catchUp);
    const requestsBefore = listRequests();
    const taken = await runCli(['sync'], env).done;
    assert.equal(taken.code, 0, taken.stderr.slice(-1000));
    const after = await runs();
    assert.deepEqual(
      after.map((r) => [r.id, r.status]),
      [
        [after[0]?.id, 'done'],
        [catchUp.id, 'done'],
      ],
      'taken over, not planned again',
    );
    // What the killed run proved is not read again: the rest, an answer cut short at each end of
    // each stretch left (and where lanes split them), and the tail after the run.
    const left = Math.ceil((Number(catchUp.head) - Number(catchUp.floor) - proven) / PER_ANSWER);
    const requests = listRequests() - requestsBefore;
    assert.ok(gaps > 0, 'the kill left stretches unproven');
    assert.ok(
      requests <= left + 2 * gaps + 10,
      `${requests} requests for ${left} answers left in ${gaps} stretches`,
    );
    assert.ok((await stream()).watermark >= Number(catchUp.head));

    // Records shown late inside the stretch are read by a run a window later: it reads again from
    // the lowest gap the catch-up saw before it could settle (in lanes too, when that is far).
    await new Promise((resolve) => setTimeout(resolve, 2 * LATE_MS));
    const again = await runCli(['sync'], env).done;
    assert.equal(again.code, 0, again.stderr.slice(-1000));
    await assertMirrorsTruth(testDb.database.db, simulator);
    const settled = await stream();
    assert.equal(settled.settled, settled.watermark, 'the stretch settled');
    assert.ok((await runs()).every((r) => r.status === 'done'));
    // Settled, the next tail is near the head: no run.
    const planned = (await runs()).length;
    const near = await runCli(['sync'], env).done;
    assert.equal(near.code, 0, near.stderr.slice(-1000));
    assert.equal((await runs()).length, planned, 'a tail near the head plans no run');
    await assertMirrorsTruth(testDb.database.db, simulator);
  });
});

describe('sync by key of a filtered list far behind the service', () => {
  it('catches up in lanes as a run of that stream, and then holds every record of the list', async () => {
    const sim = createSimulator({ records: HISTORY, seed: 32, paging: 'key', faults: { latencyMs: 5 } });
    const { url } = await sim.listen();
    const filteredDb = await createTestDatabase();
    try {
      const env = {
        LEDGER_BASE_URL: url,
        DATABASE_URL: filteredDb.url,
        LEDGER_REQUESTS_PER_SECOND: '0',
        LEDGER_PAGE_COUNT: String(PER_ANSWER),
        // Nothing read waits to settle: the tail's settled mark is its watermark.
        LEDGER_SETTLE_MS: '0',
        LOG_LEVEL: 'warn',
      };
      const args = ['sync', '--without-action', 'set'];
      const first = await runCli(args, env).done;
      assert.equal(first.code, 0, first.stderr.slice(-1000));
      sim.addRecords(ADDED);
      sim.settleAll();
      const second = await runCli(args, env).done;
      assert.equal(second.code, 0, second.stderr.slice(-1000));
      const db = filteredDb.database.db;
      const runRows = await queryRows<{ key: string; floor: string | null; status: string }>(
        db,
        sql`SELECT stream_key AS key, floor_raw_id::text AS floor, status FROM backfill_runs ORDER BY created_at`,
      );
      const catchUps = runRows.filter((r) => r.floor !== null);
      assert.equal(catchUps.length, 1, `one catch-up: ${JSON.stringify(runRows)}`);
      assert.notEqual(catchUps[0]?.key, 'txs', 'of the filtered stream');
      assert.equal(catchUps[0]?.status, 'done');
      const stored = await queryRows<{ raw_id: string }>(
        db,
        sql`SELECT raw_id::text AS raw_id FROM ledger_transactions t WHERE action <> 'set' ORDER BY t.raw_id`,
      );
      const listed = wellFormedTruth(sim).filter((r) => r.action !== 'set');
      assert.deepEqual(
        stored.map((r) => Number(r.raw_id)),
        listed.map((r) => r.rawId),
        'every record of the list stored once',
      );
    } finally {
      await sim.close();
      await filteredDb.drop();
    }
  });
});
