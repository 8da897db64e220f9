/**
 * Scenario "status freshness": how long a change at the service (a record packaged, a burn's
 * target-chain hash landing) takes to reach its row, and how many requests the indexer spends
 * per arriving record, with workers on a 1 s schedule and, separately, `sync` every 2 s.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BenchContext } from './context.js';
import { freshDatabase, usingDatabase } from './context.js';
import type { ScenarioDatabase } from './databases.js';
import { round } from './figures.js';
import { percentile } from './freshness.js';
import { indexerEnv } from './indexer-sync.js';
import { startWorkerFleet } from './indexer-workers.js';
import { simulatorBase } from './options.js';
import { startPrivateRedis } from './redis-server.js';
import { requestsServed, type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';

const ARRIVALS_PER_SECOND = 20;
const PACKAGE_DELAY_MS = 3_000;
const BURN_TARGET_DELAY_MS = 10_000;

/** Lags of one kind of change, ms. */
export interface LagFigures {
  changes: number;
  /** Changes the mirror never showed by the end. */
  missed: number;
  p50: number;
  p95: number;
  max: number;
}

/** One run: a way of running the indexer against the same arrivals. */
export interface StatusFreshnessRun {
  mode: 'workers' | 'sync';
  intervalMs: number;
  arrived: number;
  /** Every request the simulator served while records arrived, per arriving record. */
  requestsPerArrival: number;
  packaged: LagFigures;
  targetHash: LagFigures;
  all: LagFigures;
}

export interface StatusFreshnessFigures {
  arrivalsPerSecond: number;
  packageDelayMs: number;
  burnTargetDelayMs: number;
  windowMs: number;
  runs: StatusFreshnessRun[];
}

export async function runStatusFreshnessScenario(context: BenchContext): Promise<StatusFreshnessFigures> {
  const windowMs = context.options.quick ? 10_000 : 30_000;
  const runs: StatusFreshnessRun[] = [];
  for (const mode of ['workers', 'sync'] as const) {
    context.log(`status freshness: ${mode}, ${ARRIVALS_PER_SECOND} arrivals/s for ${windowMs} ms`);
    runs.push(await runOnce(context, mode, windowMs));
  }
  return {
    arrivalsPerSecond: ARRIVALS_PER_SECOND,
    packageDelayMs: PACKAGE_DELAY_MS,
    burnTargetDelayMs: BURN_TARGET_DELAY_MS,
    windowMs,
    runs,
  };
}

async function runOnce(
  context: BenchContext,
  mode: 'workers' | 'sync',
  windowMs: number,
): Promise<StatusFreshnessRun> {
  const { options, setup } = context;
  const simulator = await startSimulatorProcess(
    {
      records: options.freshnessHistory,
      ...simulatorBase(options),
      arrivalsPerSecond: ARRIVALS_PER_SECOND,
      packageDelayMs: PACKAGE_DELAY_MS,
      burnTargetDelayMs: BURN_TARGET_DELAY_MS,
    },
    setup.root,
  );
  const redis = mode === 'workers' ? await startPrivateRedis() : null;
  try {
    await simulator.pauseArrivals();
    await simulator.settleAll();
    return await usingDatabase(await freshDatabase(context, `status_${mode}`), async (database) => {
      const env = indexerEnv(setup, {
        databaseUrl: database.url,
        baseUrl: simulator.url,
        redisUrl: redis?.url,
      });
      // The history first, by one sync: the scenario measures keeping current, not the backfill.
      await runSync(context, env);
      const runner =
        mode === 'workers'
          ? await startWorkerFleet(setup, {
              count: Math.min(2, options.workerProcesses),
              every: '1s',
              database,
              baseUrl: simulator.url,
              redisUrl: redis?.url ?? '',
            })
          : startSyncLoop(context, env, 2_000);
      let requests = 0;
      let head = 0;
      try {
        head = await simulator.headRawId();
        const before = requestsServed(await simulator.stats());
        await simulator.resumeArrivals();
        await new Promise((resolve) => setTimeout(resolve, windowMs));
        await simulator.pauseArrivals();
        requests = requestsServed(await simulator.stats()) - before;
        // Let the last arrivals settle at the service and reach the mirror.
        await new Promise((resolve) => setTimeout(resolve, PACKAGE_DELAY_MS + BURN_TARGET_DELAY_MS + 6_000));
      } finally {
        await runner.stop();
      }
      const lags = await measureLags(context, simulator, database, head);
      return {
        mode,
        intervalMs: mode === 'workers' ? 1_000 : 2_000,
        arrived: lags.arrived,
        requestsPerArrival: round(requests / Math.max(1, lags.arrived), 3),
        ...lags.figures,
      };
    });
  } finally {
    await redis?.stop();
    await simulator.close();
  }
}

/** Runs `ledger-indexer sync` once; rejects on a non-zero exit. */
function runSync(context: BenchContext, env: Record<string, string | undefined>): Promise<void> {
  const { setup } = context;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...setup.nodeFlags, ...setup.runner.nodeArgs(['sync'])], {
      cwd: setup.root,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`sync exited ${code}: ${stderr.trim().split('\n').at(-1)}`)),
    );
  });
}

/** `sync` started every `everyMs` (at once when the previous one took longer), until stopped. */
function startSyncLoop(
  context: BenchContext,
  env: Record<string, string | undefined>,
  everyMs: number,
): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await runSync(context, env);
      const rest = everyMs - (Date.now() - started);
      if (rest > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

interface TruthChange {
  rawId: number;
  packagedAtMs: number | null;
  targetLandedAtMs: number | null;
}

/** Lags from the simulator's change times to the rows: the history's `packaged` row, the row's target hash. */
async function measureLags(
  context: BenchContext,
  simulator: SimulatorProcess,
  database: ScenarioDatabase,
  head: number,
): Promise<{ arrived: number; figures: Pick<StatusFreshnessRun, 'packaged' | 'targetHash' | 'all'> }> {
  const file = join(context.tmpDir, `status-freshness-${Date.now()}.ndjson`);
  await simulator.dump(file, head);
  const truth: TruthChange[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line !== '') truth.push(JSON.parse(line) as TruthChange);
  }
  const rows = await database.query<{ raw_id: string; packaged_ms: number | null; target_ms: number | null }>(
    `SELECT t.raw_id::text AS raw_id,
       (SELECT extract(epoch FROM min(h.observed_at)) * 1000 FROM ledger_tx_status_history h
         WHERE h.raw_id = t.raw_id AND h.status = 'packaged')::float8 AS packaged_ms,
       CASE WHEN t.target_chain_tx_hash <> '' THEN extract(epoch FROM t.updated_at) * 1000 END::float8 AS target_ms
     FROM ledger_transactions t WHERE t.raw_id > $1`,
    [head],
  );
  const seen = new Map(rows.map((r) => [Number(r.raw_id), r]));
  const packaged: number[] = [];
  const target: number[] = [];
  let missedPackaged = 0;
  let missedTarget = 0;
  for (const change of truth) {
    const row = seen.get(change.rawId);
    if (change.packagedAtMs !== null) {
      if (row?.packaged_ms == null) missedPackaged++;
      else packaged.push(Math.max(0, row.packaged_ms - change.packagedAtMs));
    }
    if (change.targetLandedAtMs !== null) {
      if (row?.target_ms == null) missedTarget++;
      else target.push(Math.max(0, row.target_ms - change.targetLandedAtMs));
    }
  }
  return {
    arrived: truth.length,
    figures: {
      packaged: lagFigures(packaged, missedPackaged),
      targetHash: lagFigures(target, missedTarget),
      all: lagFigures([...packaged, ...target], missedPackaged + missedTarget),
    },
  };
}

function lagFigures(values: number[], missed: number): LagFigures {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    changes: values.length + missed,
    missed,
    p50: round(percentile(sorted, 0.5), 0),
    p95: round(percentile(sorted, 0.95), 0),
    max: round(sorted.at(-1) ?? Number.NaN, 0),
  };
}
