/**
 * Chaos: two `worker` processes and a `sync` run from cron keep a growing, faulty service
 * mirrored while PostgreSQL crashes and restarts, Redis restarts empty, and workers and the sync
 * are killed outright. Once arrivals stop and everything settles, the table must equal the
 * service: no record lost, none twice, every field equal. Every random choice (the data, the
 * order of the blows, their timing) comes from one seed, printed with any failure.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { SimulatorFaults } from '../../src/simulator/index.js';
import { type Rng, withSeed } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  type Cluster,
  globalListState,
  missingRecordsReport,
  pickAccounts,
  type SyncCron,
  startCluster,
  storedCount,
} from './chaos-cluster.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth, wellFormedTruth } from './sync-truth.js';

/** Every kind of request failure the simulator offers, at rates a real service might show on a bad day. */
const FAULTS: Partial<SimulatorFaults> = {
  latencyMs: 5,
  latencyJitterMs: 30,
  errorRate: 0.05,
  rateLimitRate: 0.02,
  retryAfterSeconds: 1,
  truncateRate: 0.02,
  hangRate: 0.002,
  malformedRate: 0.01,
};

/** The blows, dealt once each in a seeded order. */
const BLOWS = [
  'postgres-crash',
  'postgres-restart',
  'redis-restart',
  'kill-worker',
  'kill-worker',
  'kill-sync',
] as const;
type Blow = (typeof BLOWS)[number];

interface Run {
  cluster: Cluster;
  /** The service's dialect: by page number the workers backfill in range jobs, by key in one walk. */
  paging: 'page' | 'key';
  rng: Rng;
  /** Notes a step in the timeline printed with the result. */
  mark(what: string): void;
}

interface Running extends Run {
  /** The two workers meant to be running. */
  slots: ReturnType<Cluster['startWorker']>[];
  cron: SyncCron;
}

/**
 * Registers the chaos test. Two test files call it, so that the runner runs two clusters at once,
 * each with its own seed, as a loaded machine would: one service that speaks only page numbers
 * (the workers backfill it with parallel range jobs), one that speaks only the key dialect (one
 * walk by key).
 */
export function describeChaos(name = 'chaos', paging: 'page' | 'key' = 'page'): void {
  describe(name, () => {
    let cluster: Cluster | undefined;
    after(async () => {
      await cluster?.close();
    });

    it(
      'a sync and two workers through PostgreSQL and Redis restarts, SIGKILLs and a faulty service end equal to the service',
      {
        timeout: 180_000,
      },
      (t) =>
        withSeed(async (rng, seed) => {
          const started = Date.now();
          const timeline: string[] = [];
          const mark = (what: string) =>
            timeline.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${what}`);
          cluster = await startCluster({
            paging,
            records: 1000,
            seed,
            arrivalsPerSecond: 15,
            // Records are final at first sight: the end state does not wait on re-read schedules.
            packageDelayMs: 0,
            burnTargetDelayMs: 0,
            faults: FAULTS,
          });
          const current = cluster;
          try {
            await chaosRun({ cluster: current, rng, mark, paging });
          } catch (error) {
            const missing = await missingRecordsReport(current.database, current.sim);
            process.stderr.write(
              `${current.logs()}\n--- timeline:\n${timeline.join('\n')}\n${missing ? `--- missing records:\n${missing}\n` : ''}`,
            );
            throw error;
          }
          t.diagnostic(`seed ${seed}: ${timeline.join(', ')}`);
        }),
    );
  });
}

async function chaosRun({ cluster, rng, mark, paging }: Run): Promise<void> {
  const slots = [cluster.startWorker(), cluster.startWorker()];
  await Promise.all(slots.map((worker) => within(worker.ready, 60_000, 'a worker to start')));
  // One job starts the parallel backfill; the schedules follow once it runs. (Two jobs planning
  // it at once would also start a sequential walk of the whole list beside it.)
  await cluster.queues.add('sync-stream', { stream: {} });
  if (paging === 'page') {
    await waitFor(
      'the parallel backfill to start',
      async () => (await globalListState(cluster.database))?.backfill,
      { timeoutMs: 30_000 },
    );
  }
  await cluster.schedule();
  const syncArgs = pickAccounts(cluster.sim, rng).flatMap((account) => ['--account', account]);
  const cron = cluster.startSyncCron(syncArgs);
  const running: Running = { cluster, rng, mark, paging, slots, cron };
  mark('workers ready');

  for (const blow of shuffled(rng, BLOWS)) {
    await progress(cluster, rng.int(20, 100));
    await deal(running, blow);
    mark(blow);
  }
  await progress(cluster, 30);

  cluster.sim.pauseArrivals();
  // The newest record the mirror can store: one the service serves malformed (chosen by rawId,
  // so the newest may be one) is set aside, and the watermark stays below it.
  const newest = cluster.sim.headRawId();
  const head = Math.max(
    -1,
    ...wellFormedTruth(cluster.sim)
      .map((r) => r.rawId)
      .filter((id) => id <= newest),
  );
  await cron.stop();
  // A backfill run that gave up is followed by a new one that repairs its gaps: only the deadline counts.
  let state: Awaited<ReturnType<typeof globalListState>>;
  await waitFor(
    `the workers to prove the backfill and tail the global list to the head ${head}`,
    async () => {
      state = (await globalListState(cluster.database)) ?? state;
      // By key there is no parallel backfill to prove: the walk's watermark says it all.
      const proven = paging === 'key' || state?.backfill === 'done';
      return proven && state?.watermark !== null && state?.watermark !== undefined && state.watermark >= head;
    },
    { timeoutMs: 60_000, everyMs: 250 },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)} (last seen: ${JSON.stringify(state)})`);
  });
  mark('workers settled');
  const last = await runCli(['sync', ...syncArgs], { ...cluster.env, LOG_LEVEL: 'warn' }).done;
  assert.equal(last.code, 0, `the last sync succeeds: ${last.stderr.slice(-1000)}`);
  mark('last sync');
  await assertMirrorsTruth(cluster.database.db, cluster.sim);
  assertSyncOutcomes(cron);

  for (const worker of slots) worker.child.kill('SIGTERM');
  for (const worker of slots) {
    const exit = await within(worker.exited, 30_000, 'a worker to drain after SIGTERM');
    assert.equal(exit.code, 0, 'a worker drains and exits 0 after all it went through');
  }
}

/**
 * Every `sync` run ended as the README promises, unless the test killed it: 0 (up to date), or 1
 * with its reason on a line of its own (a server failed; checkpoints kept), never a crash.
 */
function assertSyncOutcomes(cron: SyncCron): void {
  const unexpected = cron.outcomes
    .filter((o) => o.signal !== 'SIGKILL' && o.code !== 0)
    .filter((o) => !(o.code === 1 && /^ledger-indexer sync: /m.test(o.stderr)))
    .map((o) => ({ ...o, stderr: o.stderr.slice(-1500) }));
  assert.deepEqual(unexpected, [], 'every sync run ended 0, or 1 with its reason');
  assert.ok(
    cron.outcomes.some((o) => o.code === 0),
    'some sync run completed during the chaos',
  );
}

/** Deals one blow and waits until the part it hit is back. */
async function deal({ cluster, rng, slots, cron }: Running, blow: Blow): Promise<void> {
  const downMs = rng.int(300, 2500);
  const down = () => new Promise((resolve) => setTimeout(resolve, downMs));
  switch (blow) {
    case 'postgres-crash':
      await cluster.pg.stop('immediate');
      await down();
      await cluster.pg.start();
      return;
    case 'postgres-restart':
      await cluster.pg.stop('fast');
      await down();
      await cluster.pg.start();
      return;
    case 'redis-restart':
      // Without persistence: every job and schedule is gone; Postgres holds what matters.
      await cluster.redis.stop();
      await down();
      await cluster.redis.start();
      await cluster.schedule();
      return;
    case 'kill-worker': {
      const slot = rng.int(0, slots.length - 1);
      const doomed = slots[slot]!;
      doomed.child.kill('SIGKILL');
      assert.equal((await doomed.exited).signal, 'SIGKILL');
      const replacement = cluster.startWorker();
      slots[slot] = replacement;
      await within(replacement.ready, 60_000, 'a replacement worker to start');
      return;
    }
    case 'kill-sync':
      await cron.killRunning();
      return;
  }
}

/** Waits for `n` more stored records than now: the system makes progress between blows. */
async function progress(cluster: Cluster, n: number): Promise<void> {
  const from = await waitFor('the database to answer', () => storedCount(cluster.database), {
    timeoutMs: 30_000,
  });
  await waitFor(
    `${n} more records stored (past ${from})`,
    async () => ((await storedCount(cluster.database)) ?? 0) >= from + n,
    { timeoutMs: 45_000, everyMs: 200 },
  );
}

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
