import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import { LeaseLostError } from '../../src/errors.js';
import { type Setup, setUp } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';
import { pagesCommitted } from '../helpers/walk-progress.js';

async function walkState(
  setup: Setup,
): Promise<{ nextPage: number | null; watermark: number | null } | undefined> {
  const rows = await queryRows<{ next_page: string | null; watermark: string | null }>(
    setup.db.database.db,
    sql`select (walk->>'nextPage') as next_page, watermark::text as watermark from sync_streams where key = 'txs'`,
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    nextPage: row.next_page === null ? null : Number(row.next_page),
    watermark: row.watermark === null ? null : Number(row.watermark),
  };
}

describe('worker lifecycle', () => {
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
  });

  it('SIGTERM lets the running walk stop at a page boundary, keeps its checkpoint and exits 0', async () => {
    setup = await setUp('worker-sigterm', { records: 4000, seed: 31, faults: { latencyMs: 60 } });
    const current = setup;
    const worker = current.start(['--sequential-backfill']);
    await worker.ready;
    await current.queues.add('sync-stream', { stream: {} });
    await waitFor('the walk to be under way', async () => (await pagesCommitted(current.db.database.db)) > 5);
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    assert.equal(exit.code, 0, worker.log().slice(-2000));
    assert.match(worker.log(), /worker stopped/);
    const state = await walkState(current);
    assert.ok(state && (state.nextPage ?? 0) > 5, 'the checkpoint was kept');
    assert.equal((await current.queues.sync.getJobCounts('failed')).failed, 0, 'the job did not fail');
    // A new worker picks the walk up where it stopped.
    await current.start(['--sequential-backfill']).ready;
    await current.queues.add('sync-stream', { stream: {} });
    await waitFor(
      'the walk to finish',
      async () => ((await walkState(current))?.watermark ?? null) !== null,
      {
        timeoutMs: 30_000,
      },
    );
    await current.close();
    setup = undefined;
  });

  it('a job delivered twice runs once: the second runner is refused by the stream lease', async () => {
    setup = await setUp('worker-duplicate', { records: 600, seed: 32, faults: { latencyMs: 20 } });
    const current = setup;
    await current.start(['--sequential-backfill']).ready;
    await Promise.all([
      current.queues.add('sync-stream', { stream: {} }, { jobId: 'delivery-1' }),
      current.queues.add('sync-stream', { stream: {} }, { jobId: 'delivery-2' }),
    ]);
    const results = await waitFor('both deliveries to finish', async () => {
      const jobs = await Promise.all(
        ['delivery-1', 'delivery-2'].map((id) => current.queues.sync.getJob(id)),
      );
      const values = jobs.map((job) => job?.returnvalue as Record<string, unknown> | undefined);
      return values.every((v) => v !== undefined && v !== null) ? values : undefined;
    });
    const skipped = results.filter((r) => r?.skipped === 'lease-held');
    assert.equal(skipped.length, 1, JSON.stringify(results));
    assert.equal((await walkState(current))?.watermark, current.sim.headRawId());
    await current.close();
    setup = undefined;
  });

  it('a runner that lost its lease while paused cannot move the checkpoint backwards', async () => {
    setup = await setUp('worker-fence', { records: 10, seed: 33 });
    let clock = Date.now();
    const store = createPgStore({ database: setup.db.database, now: () => new Date(clock) });
    const paused = await store.acquireStream({}, 'paused-runner', 50);
    clock += 1000; // the paused runner's lease runs out
    const fresh = await store.acquireStream({}, 'new-runner', 60_000);
    assert.ok(fresh.lease.fence > paused.lease.fence);
    await store.commitPage({
      lease: fresh.lease,
      pages: [],
      rejected: [],
      walk: null,
      watermark: 100,
    });
    await assert.rejects(
      store.commitPage({
        lease: paused.lease,
        pages: [],
        rejected: [],
        walk: null,
        watermark: 50,
      }),
      LeaseLostError,
    );
    assert.equal((await walkState(setup))?.watermark, 100);
    await setup.close();
    setup = undefined;
  });
});
