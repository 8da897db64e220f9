/**
 * Workers on a service that speaks only the key dialect: a first backfill is split into range
 * jobs by rawId (or, with `--sequential-backfill`, one stream job walks the list by key), a
 * hundred records a request; a worker killed in the middle leaves proofs or a cursor the next
 * jobs resume from, and the mirror ends equal to the service, tails and records arriving included.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { type Setup, setUp } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';
import { assertMirrorsTruth } from './sync-truth.js';

/** The global stream's watermark and the cursor of its walk in progress. */
async function globalStream(setup: Setup): Promise<{ watermark: number | null; cursor: number | null }> {
  const rows = await queryRows<{ watermark: string | null; cursor: string | null }>(
    setup.db.database.db,
    sql`SELECT watermark::text AS watermark, walk->>'cursor' AS cursor FROM sync_streams WHERE key = 'txs'`,
  );
  const row = rows[0];
  return {
    watermark: row?.watermark == null ? null : Number(row.watermark),
    cursor: row?.cursor == null ? null : Number(row.cursor),
  };
}

/** Proven-range rows of the global stream. */
async function provenRows(setup: Setup): Promise<number> {
  const rows = await queryRows<{ n: number }>(
    setup.db.database.db,
    sql`SELECT count(*)::int AS n FROM backfill_proven_ranges WHERE stream_key = 'txs'`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Waits until the global stream's watermark reaches `head`, asking for a stream job at each look
 * (a killed job's lease expires meanwhile; a running backfill's jobs answer "running").
 */
async function reachHead(setup: Setup, head: number, what: string, everyMs = 1000): Promise<void> {
  await waitFor(
    what,
    async () => {
      const { watermark } = await globalStream(setup);
      if (watermark !== null && watermark >= head) return true;
      await setup.queues.add('sync-stream', { stream: {} });
      return false;
    },
    { timeoutMs: 90_000, everyMs },
  );
}

describe('workers on a service that speaks only the key dialect', () => {
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
  });

  it('backfill in range jobs by key, a killed worker resumed, ends equal to the service', async () => {
    setup = await setUp('worker-key-ranges', {
      records: 3000,
      seed: 53,
      paging: 'key',
      arrivalsPerSecond: 20,
      packageDelayMs: 0,
      burnTargetDelayMs: 0,
      faults: { latencyMs: 30 },
    });
    const current = setup;
    const doomed = current.start();
    await doomed.ready;
    await current.queues.add('sync-stream', { stream: {} });
    await waitFor('a range job by key to commit a proof', async () => (await provenRows(current)) > 0, {
      timeoutMs: 20_000,
      everyMs: 20,
    });
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await current.start().ready;
    current.sim.pauseArrivals();
    const head = current.sim.headRawId();
    await reachHead(current, head, 'the backfill by key, then the tail, to reach the head');
    await assertMirrorsTruth(current.db.database.db, current.sim);
    const requests = current.sim.listRequests();
    assert.equal(requests.pageRequests, 0, 'never a page number');
    const runs = await queryRows<{ status: string; head: string }>(
      current.db.database.db,
      sql`SELECT status, head_raw_id::text AS head FROM backfill_runs`,
    );
    assert.equal(runs.length, 1);
    assert.equal(runs[0]?.status, 'done');
    // Ranges of 800 rawIds (8 answers of 100): at least four range jobs below a head of 3000.
    const ranges = Math.ceil(Number(runs[0]?.head) / 800);
    assert.ok(ranges >= 4, `${ranges} ranges`);
  });

  it('with --sequential-backfill, one walk by key, a killed worker resumed from its cursor, ends equal', async () => {
    await setup?.close();
    setup = await setUp('worker-key', {
      records: 3000,
      seed: 52,
      paging: 'key',
      arrivalsPerSecond: 20,
      packageDelayMs: 0,
      burnTargetDelayMs: 0,
      faults: { latencyMs: 30 },
    });
    const current = setup;
    const doomed = current.start(['--sequential-backfill']);
    await doomed.ready;
    await current.queues.add('sync-stream', { stream: {} });
    await waitFor(
      'the walk by key to commit a cursor',
      async () => (await globalStream(current)).cursor !== null,
      {
        timeoutMs: 20_000,
        everyMs: 20,
      },
    );
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await current.start(['--sequential-backfill']).ready;
    current.sim.pauseArrivals();
    const head = current.sim.headRawId();
    // The killed job's lease expires; stream jobs are asked for until the watermark reaches the head.
    await reachHead(current, head, 'the walk by key to reach the head');
    await assertMirrorsTruth(current.db.database.db, current.sim);
    const requests = current.sim.listRequests();
    assert.equal(requests.pageRequests, 0, 'never a page number');
    const backfillRuns = await queryRows<{ n: number }>(
      current.db.database.db,
      sql`SELECT count(*)::int AS n FROM backfill_runs`,
    );
    assert.equal(backfillRuns[0]?.n, 0, 'no range jobs by key');
  });

  it('catch up a tail far behind in range jobs across the workers, ending equal to the service', async () => {
    await setup?.close();
    setup = await setUp('worker-key-catch-up', {
      records: 2000,
      seed: 54,
      paging: 'key',
      arrivalsPerSecond: 0,
      packageDelayMs: 0,
      burnTargetDelayMs: 0,
      faults: { latencyMs: 10 },
    });
    const current = setup;
    await current.start().ready;
    await current.start().ready;
    await reachHead(current, current.sim.headRawId(), 'the first backfill to reach the head', 500);
    const first = await globalStream(current);
    // Eighty answers of a hundred behind: more than a tail reads itself.
    current.sim.addRecords(8000);
    await reachHead(current, current.sim.headRawId(), 'the catch-up, then the tail, to reach the head', 500);
    await assertMirrorsTruth(current.db.database.db, current.sim);
    const runs = await queryRows<{ status: string; floor: string | null; head: string }>(
      current.db.database.db,
      sql`SELECT status, floor_raw_id::text AS floor, head_raw_id::text AS head FROM backfill_runs ORDER BY created_at`,
    );
    assert.deepEqual(
      runs.map((r) => [r.status, r.floor === null]),
      [
        ['done', true],
        ['done', false],
      ],
      'a first backfill, then a catch-up',
    );
    const catchUp = runs[1]!;
    assert.ok(Number(catchUp.floor) <= Number(first.watermark), 'from at most the watermark it found');
    assert.ok(Number(catchUp.head) > Number(first.watermark) + 7000, 'to the head its tail saw');
    assert.equal(current.sim.listRequests().pageRequests, 0, 'never a page number');
  });
});
