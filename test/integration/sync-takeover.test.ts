import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { listStreams } from '../../src/db/queries/stream-queries.js';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait-for.js';
import { pagesCommitted } from '../helpers/walk-progress.js';
import { runCli, runCliUncollected } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

let simulator: Simulator;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  // Page numbers: a kill lands mid-backfill, between page commits.
  simulator = createSimulator({ records: 4000, seed: 24, paging: 'page', faults: { latencyMs: 8 } });
  const { url } = await simulator.listen();
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '4',
    // One writer: the first backfill is the walk, so the kill lands between its page commits.
    LEDGER_WRITERS: '1',
    LOG_LEVEL: 'warn',
  };
});

after(async () => {
  await simulator.close();
  await testDb.drop();
});

async function leaseOwner(): Promise<string | null> {
  const streams = await listStreams(testDb.database.db);
  return streams.find((s) => s.key === 'txs')?.leaseOwner ?? null;
}

describe('a sync started after another', () => {
  it('takes over at once from a sync killed mid-backfill whose process has not vanished yet', async () => {
    const killed = runCliUncollected(['sync'], env);
    try {
      const pid = await killed.pid;
      await waitFor(
        'the first sync to commit pages',
        async () => (await pagesCommitted(testDb.database.db)) >= 40,
      );
      process.kill(pid, 'SIGKILL');
      // What the next run finds: the killed process's pid still there, and its lease on the stream.
      assert.doesNotThrow(() => process.kill(pid, 0), 'the killed process has not been collected');
      assert.match((await leaseOwner()) ?? '', new RegExp(`^sync:[^:]+:${pid}:`));

      const next = await runCli(['sync'], env).done;
      assert.equal(next.code, 0, next.stderr.slice(-800));
      assert.match(next.stdout, /^txs: backfill, \d+ pages, .*up to date/m);
      assert.equal(await leaseOwner(), null, 'the lease is released at the end');
      await assertMirrorsTruth(testDb.database.db, simulator);
      const runs = await queryRows<{ owner: string; outcome: string; error: string | null }>(
        testDb.database.db,
        sql`SELECT owner, outcome, error FROM sync_runs WHERE stream_key = 'txs' ORDER BY fence`,
      );
      assert.equal(runs.length, 2, JSON.stringify(runs));
      assert.equal(runs[0]?.outcome, 'error');
      assert.match(runs[0]?.error ?? '', /ended without releasing it/);
      assert.equal(runs[1]?.outcome, 'ok');
    } finally {
      killed.close();
    }
  });

  it('is still refused while the one holding the stream runs', async () => {
    simulator.setFaults({ latencyMs: 200 });
    const holder = runCli(['sync', '--full'], env);
    try {
      const pid = holder.child.pid;
      await waitFor('the first sync to hold the stream', async () =>
        new RegExp(`^sync:[^:]+:${pid}:`).test((await leaseOwner()) ?? ''),
      );
      const refused = await runCli(['sync'], env).done;
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(
        refused.stderr,
        new RegExp(
          `lease on stream txs lost: held by sync:[^:]+:${pid}:\\S+ until .*another sync or a worker`,
        ),
      );
      assert.match(
        (await leaseOwner()) ?? '',
        new RegExp(`^sync:[^:]+:${pid}:`),
        'the holder keeps its lease',
      );
      simulator.setFaults({ latencyMs: 8 });
      const held = await holder.done;
      assert.equal(held.code, 0, held.stderr.slice(-800));
      assert.match(held.stdout, /^txs: backfill, \d+ pages, .*up to date/m);
    } finally {
      simulator.setFaults({ latencyMs: 8 });
      if (holder.child.exitCode === null) holder.child.kill('SIGKILL');
    }
  });
});

describe('a sync started after one killed while re-reading', () => {
  let service: Simulator;
  let db: TestDatabase;
  let rereadEnv: Record<string, string>;

  before(async () => {
    // Records stay `confirmed` at the service: every re-read finds them not final.
    service = createSimulator({
      records: 500,
      seed: 25,
      paging: 'page',
      arrivalsPerSecond: 0,
      packageDelayMs: 3_600_000,
    });
    const { url } = await service.listen();
    db = await createTestDatabase();
    rereadEnv = {
      LEDGER_BASE_URL: url,
      DATABASE_URL: db.url,
      LEDGER_REQUESTS_PER_SECOND: '0',
      LOG_LEVEL: 'warn',
      // Due in the run after the one that stored them.
      LEDGER_RECHECK_AFTER_MS: '0',
    };
  });

  after(async () => {
    await service.close();
    await db.drop();
  });

  const claimedBy = async (pid: number) =>
    (
      await queryRows<{ raw_id: string }>(
        db.database.db,
        sql`SELECT raw_id::text FROM ledger_tx_rechecks WHERE claimed_by LIKE ${`sync:%:${pid}:%`} ORDER BY raw_id`,
      )
    ).map((r) => Number(r.raw_id));

  it('makes the records the killed run had claimed due again at once', async () => {
    const first = await runCli(['sync'], rereadEnv).done;
    assert.equal(first.code, 0, first.stderr.slice(-800));
    service.addRecords(30);
    const second = await runCli(['sync'], rereadEnv).done;
    assert.equal(second.code, 0, second.stderr.slice(-800));
    // New records above them, so the next tail does not read most of the 30 again on its pages.
    service.addRecords(25);
    service.setFaults({ latencyMs: 1_500 });
    const killed = runCliUncollected(['sync'], rereadEnv);
    try {
      const pid = await killed.pid;
      const claimed = await waitFor(
        'the sync to claim records for a re-read',
        async () => {
          const ids = await claimedBy(pid);
          return ids.length > 0 && ids;
        },
        { everyMs: 20, timeoutMs: 60_000 },
      );
      // Its re-read requests take 1.5 s: the kill lands while they are in flight.
      process.kill(pid, 'SIGKILL');
      service.setFaults({ latencyMs: 0 });

      const next = await runCli(['sync'], rereadEnv).done;
      assert.equal(next.code, 0, next.stderr.slice(-800));
      assert.match(next.stderr, /re-read claims of an ended sync process released/);
      assert.deepEqual(await claimedBy(pid), [], 'no claim of the killed run is left');
      // Read again by this run (on its tail's pages or by a re-read), each is due again now: a
      // claim left standing would have kept them off until 15 s after the kill.
      const due = await queryRows<{ raw_id: string; due: boolean }>(
        db.database.db,
        sql`SELECT raw_id::text, due_at <= now() AS due FROM ledger_tx_rechecks
            WHERE raw_id = ANY(${`{${claimed.join(',')}}`}::bigint[]) ORDER BY raw_id`,
      );
      assert.deepEqual(
        due.map((r) => [Number(r.raw_id), r.due]),
        claimed.map((rawId) => [rawId, true]),
      );
    } finally {
      service.setFaults({ latencyMs: 0 });
      killed.close();
    }
  });
});
