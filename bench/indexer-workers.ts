import { spawnSync } from 'node:child_process';
import pg from 'pg';
import type { ListRequestStats } from '../src/simulator/types.js';
import type { ScenarioDatabase } from './databases.js';
import { type ThroughputRun, throughput } from './figures.js';
import { type IndexerSetup, indexerEnv, lastLine, logFileOf } from './indexer-sync.js';
import { type MeasuredProcess, type ProcessResult, spawnMeasured } from './processes.js';
import { listPagesServed, listRequestsBetween, type SimulatorProcess } from './simulator-process.js';

/** A fleet of `ledger-indexer worker` processes on one Redis and one database. */
export interface WorkerFleet {
  processes: MeasuredProcess[];
  /** Sends SIGTERM to every worker and waits for them to drain and exit. */
  stop(): Promise<ProcessResult[]>;
}

/**
 * Fails unless the CLI has the commands a fleet runs. Each is asked once (`--help`, a process of
 * its own, cached): a timed run asks before its clock starts.
 */
function assertFleetCommands(setup: IndexerSetup): void {
  for (const name of ['worker', 'schedule']) {
    if (!setup.runner.hasCommand(name)) throw new Error(`the ${name} command has not landed`);
  }
}

/** Starts `count` worker processes and registers the schedule (`schedule --every <every>`). */
export async function startWorkerFleet(
  setup: IndexerSetup,
  input: { count: number; every: string; database: ScenarioDatabase; baseUrl: string; redisUrl: string },
): Promise<WorkerFleet> {
  assertFleetCommands(setup);
  const env = indexerEnv(setup, {
    databaseUrl: input.database.url,
    baseUrl: input.baseUrl,
    redisUrl: input.redisUrl,
  });
  const processes = Array.from({ length: input.count }, (_, i) =>
    spawnMeasured({
      nodeArgs: [...setup.nodeFlags, ...setup.runner.nodeArgs(['worker'])],
      env,
      cwd: setup.root,
      label: `worker-${i + 1}`,
      logFile: logFileOf(setup, `workers-${input.count}-worker-${i + 1}`),
    }),
  );
  const stop = async (): Promise<ProcessResult[]> => {
    for (const worker of processes) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
    }
    const timers = processes.map((worker) => setTimeout(() => worker.child.kill('SIGKILL'), 30_000));
    try {
      return await Promise.all(processes.map((worker) => worker.exited));
    } finally {
      for (const timer of timers) clearTimeout(timer);
    }
  };
  const scheduled = spawnSync(process.execPath, setup.runner.nodeArgs(['schedule', '--every', input.every]), {
    cwd: setup.root,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (scheduled.status !== 0) {
    await stop();
    throw new Error(`schedule failed: ${lastLine(scheduled.stderr ?? '')}`);
  }
  return { processes, stop };
}

/**
 * Scenario 1 with the production shape: `processes` workers backfill the global list from an
 * empty database. Timed from the workers' start until every record of the simulator is stored
 * and the read-side indexes the backfill deferred are built (as a `sync` run ends).
 */
export async function runIndexerWorkers(
  setup: IndexerSetup,
  input: {
    simulator: SimulatorProcess;
    database: ScenarioDatabase;
    expectedRows: number;
    processes: number;
    redisUrl: string;
  },
): Promise<ThroughputRun> {
  assertFleetCommands(setup);
  const before = listPagesServed(await input.simulator.stats());
  const listsBefore = await input.simulator.listRequests();
  const started = performance.now();
  const fleet = await startWorkerFleet(setup, {
    count: input.processes,
    every: '2s',
    database: input.database,
    baseUrl: input.simulator.url,
    redisUrl: input.redisUrl,
  });
  const poll = new pg.Client({ connectionString: input.database.url });
  poll.on('error', () => undefined);
  await poll.connect();
  let wallMs: number;
  let rows: number;
  let peaks: Array<number | null> = [];
  let cpuMs: number | null = null;
  let listsAtEnd: ListRequestStats;
  try {
    const deadline = Date.now() + Math.max(120_000, input.expectedRows * 5);
    rows = 0;
    let countedAt = 0;
    for (;;) {
      // A count scans the whole table: polled every 100 ms it would take a core's worth of the
      // machine from the workers by the end. The stream's watermark (set once the backfill is
      // proven) is one row to read; the table is counted when it is set, and every 2 s anyway.
      if (
        rows < input.expectedRows &&
        ((await streamHasWatermark(poll)) || Date.now() - countedAt >= 2_000)
      ) {
        rows = await input.database.countRows().catch(() => 0);
        countedAt = Date.now();
      }
      // Like `sync`, whose run ends after the indexes a first backfill deferred are built.
      if (rows >= input.expectedRows && (await indexesBuilt(poll))) break;
      const dead = fleet.processes.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
      if (dead) throw new Error(`a worker exited early (${dead.child.exitCode ?? dead.child.signalCode})`);
      if (Date.now() > deadline)
        throw new Error(`workers stored ${rows} of ${input.expectedRows} rows before the deadline`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    wallMs = performance.now() - started;
    // Read when the backfill is done: the schedule's runs after it would add their requests.
    listsAtEnd = await input.simulator.listRequests();
  } finally {
    await poll.end().catch(() => undefined);
    const results = await fleet.stop();
    peaks = results.map((r) => r.peakRssBytes);
    const reported = results.filter((r) => r.cpuMs !== null);
    cpuMs = reported.length > 0 ? Math.round(reported.reduce((sum, r) => sum + (r.cpuMs ?? 0), 0)) : null;
  }
  const after = listPagesServed(await input.simulator.stats());
  const listRequests = listRequestsBetween(listsBefore, listsAtEnd);
  return throughput({
    label: `ledger-indexer workers (${input.processes} processes)`,
    rows,
    expectedRows: input.expectedRows,
    wallMs,
    pagesRequested: after - before,
    peakRssBytes: peaks.reduce<number>((sum, p) => sum + (p ?? 0), 0) || null,
    peakRssPerProcessBytes: peaks,
    cpuMs,
    listRequests,
  });
}

/** Whether no read-side index waits to be built (see `src/db/schema/deferred-indexes.ts`). */
async function indexesBuilt(client: pg.Client): Promise<boolean> {
  const result = await client
    .query<{ built: boolean }>('SELECT NOT EXISTS (SELECT 1 FROM deferred_indexes) AS built')
    .catch(() => ({ rows: [] as Array<{ built: boolean }> }));
  return result.rows[0]?.built === true;
}

/** Whether the global list's stream has a watermark yet (false before the workers made its row). */
async function streamHasWatermark(client: pg.Client): Promise<boolean> {
  const result = await client
    .query<{ set: boolean }>("SELECT watermark IS NOT NULL AS set FROM sync_streams WHERE key = 'txs'")
    .catch(() => ({ rows: [] as Array<{ set: boolean }> }));
  return result.rows[0]?.set === true;
}
