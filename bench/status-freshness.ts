/**
 * Scenario "status freshness": how long a change at the service (a record packaged, a burn's
 * target-chain hash landing) takes to reach its row, and how many requests the indexer spends
 * per arriving record, with workers on a 1 s schedule and, separately, `sync` every 2 s.
 *
 * Each run: a simulator child process with a small, settled history; a fresh database; the
 * history synced by one `sync`; then the indexer started and records arriving for the window.
 * After the window no record arrives; the normal delays pass (no settling at once), the indexer
 * gets a few more intervals, and the lags are taken from the simulator's ground truth (when each
 * change happened) and the rows (when each change showed).
 */
import { join } from 'node:path';
import type { BenchContext } from './context.js';
import { freshDatabase, usingDatabase } from './context.js';
import type { ScenarioDatabase } from './databases.js';
import { round } from './figures.js';
import { indexerEnv } from './indexer-sync.js';
import { startWorkerFleet } from './indexer-workers.js';
import { simulatorBase } from './options.js';
import { type PrivateRedis, startPrivateRedis } from './redis-server.js';
import { requestsByRoute, type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';
import { lagsOf, readChanges, readReflected, type StatusLags, type TruthChange } from './status-lags.js';
import { startSync, startSyncLoop } from './sync-loop.js';

export type { LagFigures } from './status-lags.js';

const ARRIVALS_PER_SECOND = 20;
/**
 * The service's timing: a record is packaged at 3 s and a burn's hash shows at 13 s, records
 * arriving for 30 s. `--quick` (CI's smoke run) shrinks all three, so its runs take seconds, not
 * half a minute each; its few re-reads of waiting burns make its requests per arrival run low.
 */
const TIMING = {
  full: { packageDelayMs: 3_000, burnTargetDelayMs: 10_000, windowMs: 30_000 },
  quick: { packageDelayMs: 500, burnTargetDelayMs: 1_500, windowMs: 2_000 },
} as const;
type Timing = (typeof TIMING)[keyof typeof TIMING];
/** Intervals the indexer gets, once the last change happened at the service, to show it. */
const EXTRA_INTERVALS = 4;
/** Longest the history's `sync` may take, and each `sync` of the loop. */
const HISTORY_SYNC_TIMEOUT_MS = 180_000;
const SYNC_TIMEOUT_MS = 60_000;
/** The simulator moves records on every 100 ms tick (src/simulator/simulator.ts): one tick of slack. */
const TICK_SLACK_MS = 250;

/** How the indexer runs: worker processes on a schedule, or `sync` again and again. */
export type Mode = 'workers' | 'sync';

/** One run: a way of running the indexer against the same arrivals. */
export interface StatusFreshnessRun extends StatusLags {
  mode: Mode;
  /** Worker processes, or 1 for the `sync` loop. */
  processes: number;
  /** The workers' schedule, or how often a `sync` starts, ms. */
  intervalMs: number;
  /** Records that arrived in the window. */
  arrived: number;
  /** Every request the simulator served while records arrived (control routes excluded). */
  requests: number;
  /** Those requests by route. */
  requestsByRoute: Record<string, number>;
  requestsPerArrival: number;
  /**
   * From the window's end until every change showed (looked at once the last one happened at the
   * service); null when some never did.
   */
  caughtUpAfterMs: number | null;
  /** `sync` runs that finished (the `sync` run only). */
  syncRuns?: number;
}

export interface StatusFreshnessFigures {
  arrivalsPerSecond: number;
  packageDelayMs: number;
  burnTargetDelayMs: number;
  windowMs: number;
  runs: StatusFreshnessRun[];
}

/** Runs the scenario with the workers and the `sync` loop, or only the runs named in `modes`. */
export async function runStatusFreshnessScenario(
  context: BenchContext,
  modes: readonly Mode[] = ['workers', 'sync'],
): Promise<StatusFreshnessFigures> {
  const timing = context.options.quick ? TIMING.quick : TIMING.full;
  const { windowMs } = timing;
  const runs: StatusFreshnessRun[] = [];
  const plans = [
    { mode: 'workers', intervalMs: 1_000, processes: Math.min(2, context.options.workerProcesses) },
    { mode: 'sync', intervalMs: 2_000, processes: 1 },
  ] as const;
  for (const plan of plans.filter((p) => modes.includes(p.mode))) {
    context.log(
      `status freshness: ${plan.mode} every ${plan.intervalMs} ms, ${ARRIVALS_PER_SECOND} arrivals/s for ${windowMs} ms`,
    );
    runs.push(await runOnce(context, { ...plan, timing }));
  }
  return {
    arrivalsPerSecond: ARRIVALS_PER_SECOND,
    packageDelayMs: timing.packageDelayMs,
    burnTargetDelayMs: timing.burnTargetDelayMs,
    windowMs,
    runs,
  };
}

interface RunPlan {
  mode: Mode;
  intervalMs: number;
  processes: number;
  timing: Timing;
}

/** The indexer being measured: worker processes or the `sync` loop. */
interface IndexerUnderTest {
  /** Why it stopped working early, or null. */
  failure(): string | null;
  stop(): Promise<void>;
  syncRuns?: () => number;
}

async function runOnce(context: BenchContext, plan: RunPlan): Promise<StatusFreshnessRun> {
  const simulator = await startSimulatorProcess(
    {
      records: context.options.freshnessHistory,
      ...simulatorBase(context.options),
      arrivalsPerSecond: ARRIVALS_PER_SECOND,
      packageDelayMs: plan.timing.packageDelayMs,
      burnTargetDelayMs: plan.timing.burnTargetDelayMs,
    },
    context.setup.root,
  );
  let redis: PrivateRedis | null = null;
  try {
    // Only the window's records change: what arrived while the simulator started is settled.
    await simulator.pauseArrivals();
    await simulator.settleAll();
    if (plan.mode === 'workers') redis = await startPrivateRedis();
    const database = await freshDatabase(context, `status_${plan.mode}`);
    return await usingDatabase(database, (db) =>
      measureRun(context, { plan, simulator, database: db, redis }),
    );
  } finally {
    await redis?.stop().catch(() => undefined);
    await simulator.close();
  }
}

async function measureRun(
  context: BenchContext,
  input: {
    plan: RunPlan;
    simulator: SimulatorProcess;
    database: ScenarioDatabase;
    redis: PrivateRedis | null;
  },
): Promise<StatusFreshnessRun> {
  const { plan, simulator, database } = input;
  const env = indexerEnv(context.setup, {
    databaseUrl: database.url,
    baseUrl: simulator.url,
    redisUrl: input.redis?.url,
  });
  // The history first, by one sync: the scenario measures keeping current, not the backfill.
  await startSync(context.setup, env, HISTORY_SYNC_TIMEOUT_MS).done;
  const indexer = await startIndexer(context, { plan, env, database, simulator, redisUrl: input.redis?.url });
  const truthFile = join(context.tmpDir, `status-freshness-${plan.mode}.ndjson`);
  let window: ArrivalWindow;
  let caughtUpAfterMs: number | null;
  try {
    window = await arrivalWindow(simulator, indexer, plan.timing.windowMs);
    const { packageDelayMs, burnTargetDelayMs } = plan.timing;
    const due = window.endedAt + packageDelayMs + burnTargetDelayMs + TICK_SLACK_MS;
    caughtUpAfterMs = await awaitReflection({
      indexer,
      measure: () => measure(simulator, database, truthFile, window.head),
      due,
      deadline: due + EXTRA_INTERVALS * plan.intervalMs,
      windowEnd: window.endedAt,
    });
  } finally {
    await indexer.stop();
  }
  const { changes, lags } = await measure(simulator, database, truthFile, window.head);
  return {
    mode: plan.mode,
    processes: plan.processes,
    intervalMs: plan.intervalMs,
    arrived: changes.length,
    requests: window.requests,
    requestsByRoute: window.requestsByRoute,
    requestsPerArrival: round(window.requests / Math.max(1, changes.length), 3),
    caughtUpAfterMs,
    ...(indexer.syncRuns ? { syncRuns: indexer.syncRuns() } : {}),
    ...lags,
  };
}

async function startIndexer(
  context: BenchContext,
  input: {
    plan: RunPlan;
    env: Record<string, string | undefined>;
    database: ScenarioDatabase;
    simulator: SimulatorProcess;
    redisUrl: string | undefined;
  },
): Promise<IndexerUnderTest> {
  const { plan } = input;
  if (plan.mode === 'sync') {
    const loop = startSyncLoop(context.setup, input.env, {
      everyMs: plan.intervalMs,
      timeoutMs: SYNC_TIMEOUT_MS,
    });
    return { failure: loop.failure, stop: () => loop.stop(), syncRuns: loop.runs };
  }
  const fleet = await startWorkerFleet(context.setup, {
    count: plan.processes,
    every: `${plan.intervalMs / 1000}s`,
    database: input.database,
    baseUrl: input.simulator.url,
    redisUrl: input.redisUrl ?? '',
  });
  return {
    failure() {
      const dead = fleet.processes.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
      return dead ? `a worker exited early (${dead.child.exitCode ?? dead.child.signalCode})` : null;
    },
    async stop() {
      await fleet.stop();
    },
  };
}

interface ArrivalWindow {
  /** The head before the window: the window's records come after it. */
  head: number;
  requests: number;
  requestsByRoute: Record<string, number>;
  endedAt: number;
}

/** Lets records arrive for `windowMs`, counting every request the simulator serves meanwhile. */
async function arrivalWindow(
  simulator: SimulatorProcess,
  indexer: IndexerUnderTest,
  windowMs: number,
): Promise<ArrivalWindow> {
  const head = await simulator.headRawId();
  const before = requestsByRoute(await simulator.stats());
  await simulator.resumeArrivals();
  try {
    await watchedSleep(indexer, windowMs);
  } finally {
    await simulator.pauseArrivals();
  }
  const endedAt = Date.now();
  const byRoute: Record<string, number> = {};
  for (const [route, count] of Object.entries(requestsByRoute(await simulator.stats()))) {
    const served = count - (before[route] ?? 0);
    if (served > 0) byRoute[route] = served;
  }
  const requests = Object.values(byRoute).reduce((sum, count) => sum + count, 0);
  return { head, requests, requestsByRoute: byRoute, endedAt };
}

/**
 * Waits until every change has happened at the service (`due`), then until the rows show them
 * all or `deadline`; resolves to the time from the window's end until they all showed, or null.
 */
async function awaitReflection(input: {
  indexer: IndexerUnderTest;
  measure: () => Promise<{ changes: TruthChange[]; lags: StatusLags }>;
  due: number;
  deadline: number;
  windowEnd: number;
}): Promise<number | null> {
  await watchedSleep(input.indexer, input.due - Date.now());
  for (;;) {
    const { changes, lags } = await input.measure();
    const happened = changes.every(
      (c) => c.packagedAtMs !== null && (!c.burn || c.targetLandedAtMs !== null),
    );
    if (happened && lags.all.missed === 0) return Date.now() - input.windowEnd;
    if (Date.now() >= input.deadline) return null;
    await watchedSleep(input.indexer, Math.min(500, input.deadline - Date.now()));
  }
}

/** The window's records with their change times, and the lags of the changes the rows show. */
async function measure(
  simulator: SimulatorProcess,
  database: ScenarioDatabase,
  file: string,
  head: number,
): Promise<{ changes: TruthChange[]; lags: StatusLags }> {
  await simulator.dump(file, head);
  const changes = await readChanges(file, head);
  return { changes, lags: lagsOf(changes, await readReflected(database, head)) };
}

/** Sleeps `ms`, throwing as soon as the indexer stops working. */
async function watchedSleep(indexer: IndexerUnderTest, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const failure = indexer.failure();
    if (failure !== null) throw new Error(`status freshness: ${failure}`);
    const left = until - Date.now();
    if (left <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(250, left)));
  }
}
