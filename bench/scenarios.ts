import { join } from 'node:path';
import { runBaseline } from './baseline.js';
import { runBatchBaseline } from './baseline-batch.js';
import { type BenchContext, freshDatabase, usingDatabase } from './context.js';
import type { ScenarioDatabase } from './databases.js';
import { runDbCeiling } from './db-ceiling.js';
import { type Maybe, medianOfRuns, medianRun, reason, type ThroughputRun } from './figures.js';
import { runHttpCeiling } from './http-ceiling.js';
import { runIndexerSync, type SyncRun } from './indexer-sync.js';
import { runIndexerWorkers } from './indexer-workers.js';
import { simulatorBase } from './options.js';
import { runPipelineCeiling } from './pipeline-ceiling.js';
import { startPrivateRedis } from './redis-server.js';
import { listPagesServed, requestsServed, startSimulatorProcess } from './simulator-process.js';

/** Scenario 1: backfill without added latency. */
export interface BackfillFigures {
  records: number;
  indexerSync: Maybe<ThroughputRun>;
  indexerWorkers: Maybe<ThroughputRun>;
  baseline: Maybe<ThroughputRun>;
  /** The hand-written batch script (`bench/baseline-batch.ts`). */
  batchBaseline: Maybe<ThroughputRun>;
  httpCeiling: Maybe<ThroughputRun>;
  dbCeiling: Maybe<ThroughputRun>;
  /** Fetch and `COPY` into a table without indexes, together (`bench/pipeline-ceiling.ts`). */
  pipelineCeiling: Maybe<ThroughputRun>;
}

/** Scenario 3: new records on top of a synced history. */
export interface TailFigures {
  history: number;
  newRecords: number;
  pagesRequested: number;
  /** `ceil(newRecords / 10) + 1`. */
  idealPages: number;
  /** Every request the tail sync made (list pages, look-ups of non-final records, /info…). */
  requestsServed: number;
  wallMs: number;
  rows: number;
  expectedRows: number;
  rowsMatch: boolean;
  peakRssBytes: number | null;
}

/** Scenario 2: backfill with added latency per request. */
export interface LatencyFigures {
  records: number;
  latencyMs: number;
  concurrency: number;
  run: ThroughputRun;
  /** `concurrency × 10 ÷ latency`. */
  idealRowsPerSecond: number;
}

/** Scenario 5: peak memory of a small and a large backfill. */
export interface MemoryPoint {
  records: number;
  peakRssBytes: number | null;
  /** The backfill's wall time and rate, for reference. */
  wallMs?: number;
  rowsPerSecond?: number;
}

type Wanted = { backfill: boolean; tail: boolean; memoryLarge: boolean };

/**
 * Scenario 1 (and the history of scenario 3, and the large point of scenario 5): one simulator of
 * `records` records, measured five ways, each into its own fresh database.
 */
export async function runHistoryScenarios(
  context: BenchContext,
  wanted: Wanted,
): Promise<{
  backfill: BackfillFigures | null;
  tail: Maybe<TailFigures> | null;
  memoryLarge: Maybe<MemoryPoint> | null;
}> {
  const { options, setup } = context;
  const records = options.records;
  context.log(`simulator: ${records} records, seed ${options.seed}`);
  // Every record's text stays cached after the warm-up pass, at any size: a larger history is
  // then served as cheaply as a small one, and only the indexer's side grows with it.
  const simulator = await startSimulatorProcess(
    { records, ...simulatorBase(options), arrivalsPerSecond: 0, jsonCacheSize: records },
    setup.root,
  );
  try {
    const truthFile = join(context.tmpDir, 'history.ndjson');
    const expectedRows = await simulator.dump(truthFile);
    // The simulator renders a record's JSON on first request and caches it: one unmeasured pass
    // over every page fills the cache, so the run measured first does not pay the rendering that
    // the runs after it are spared.
    context.log('simulator: warm-up pass over every page (not measured)');
    await runHttpCeiling({ baseUrl: simulator.url, concurrency: options.concurrency, expectedRows });
    const syncDatabase = await freshDatabase(context, 'backfill_sync');
    try {
      // The backfill's headline runs are repeated, in rounds of `sync`, the workers and the batch
      // script: the shared machine's speed drifts during a bench (a batch script run took 15.3 s
      // in one round and 11.4 s two rounds later), and alternating lets the drift reach all three
      // alike instead of whichever ran while it was slow. The earlier `sync` runs get databases of
      // their own; the last one's history stays for the tail scenario.
      const repeats = wanted.backfill ? options.repeats : 1;
      const syncInto = (database: ScenarioDatabase) =>
        runIndexerSync(setup, {
          label: 'ledger-indexer sync (one process)',
          simulator,
          database,
          expectedRows,
        });
      const runs = {
        sync: [] as Maybe<SyncRun>[],
        workers: [] as Maybe<ThroughputRun>[],
        script: [] as Maybe<ThroughputRun>[],
      };
      for (let round = 1; round <= repeats; round++) {
        const of = repeats > 1 ? ` (round ${round} of ${repeats})` : '';
        context.log(`backfill: ledger-indexer sync${of}`);
        runs.sync.push(
          await attempt(async () =>
            round === repeats
              ? syncInto(syncDatabase)
              : usingDatabase(await freshDatabase(context, 'backfill_sync_repeat'), syncInto),
          ),
        );
        if (!wanted.backfill) continue;
        context.log(`backfill: ledger-indexer workers (${options.workerProcesses} processes)${of}`);
        runs.workers.push(
          await attempt(async () => {
            const redis = await startPrivateRedis();
            try {
              return await usingDatabase(await freshDatabase(context, 'backfill_workers'), (database) =>
                runIndexerWorkers(setup, {
                  simulator,
                  database,
                  expectedRows,
                  processes: options.workerProcesses,
                  redisUrl: redis.url,
                }),
              );
            } finally {
              await redis.stop();
            }
          }),
        );
        context.log(`backfill: hand-written batch script${of}`);
        runs.script.push(
          await attempt(async () =>
            usingDatabase(await freshDatabase(context, 'backfill_script', { migrate: true }), (database) =>
              runBatchBaseline({ baseUrl: simulator.url, databaseUrl: database.url, expectedRows }),
            ),
          ),
        );
      }
      const sync = medianOfRuns(runs.sync);
      const indexerSync = 'notRun' in sync ? sync : stripStdout(sync);
      const memoryLarge = wanted.memoryLarge
        ? 'notRun' in indexerSync
          ? indexerSync
          : {
              records,
              peakRssBytes: indexerSync.peakRssBytes,
              wallMs: Math.round(indexerSync.wallMs),
              rowsPerSecond: indexerSync.rowsPerSecond,
            }
        : null;
      let backfill: BackfillFigures | null = null;
      if (wanted.backfill) {
        const indexerWorkers = medianOfRuns(runs.workers);
        const batchBaseline = medianOfRuns(runs.script);
        context.log('backfill: hand-written baseline');
        const baseline = await attempt(async () =>
          usingDatabase(await freshDatabase(context, 'backfill_baseline', { migrate: true }), (database) =>
            runBaseline({
              baseUrl: simulator.url,
              databaseUrl: database.url,
              budgetMs: options.baselineBudgetMs,
              expectedRows,
            }),
          ),
        );
        context.log('backfill: HTTP ceiling');
        const httpCeiling = await attempt(() =>
          runHttpCeiling({ baseUrl: simulator.url, concurrency: options.concurrency, expectedRows }),
        );
        context.log('backfill: database ceiling (COPY)');
        const dbCeiling = await attempt(async () =>
          usingDatabase(await freshDatabase(context, 'backfill_copy', { migrate: true }), (database) =>
            runDbCeiling({ truthFile, databaseUrl: database.url, expectedRows }),
          ),
        );
        context.log('backfill: fetch-and-store ceiling (fetch, then COPY into a table without indexes)');
        const pipelineCeiling = await attempt(async () =>
          usingDatabase(await freshDatabase(context, 'backfill_pipeline', { migrate: true }), (database) =>
            runPipelineCeiling({
              baseUrl: simulator.url,
              databaseUrl: database.url,
              concurrency: options.concurrency,
              expectedRows,
            }),
          ),
        );
        backfill = {
          records,
          indexerSync,
          indexerWorkers,
          baseline,
          batchBaseline,
          httpCeiling,
          dbCeiling,
          pipelineCeiling,
        };
      }
      let tail: Maybe<TailFigures> | null = null;
      if (wanted.tail) {
        tail =
          'notRun' in indexerSync
            ? { notRun: `the history could not be synced: ${indexerSync.notRun}` }
            : await attempt(() =>
                runTail(context, { simulator, database: syncDatabase, history: expectedRows }),
              );
      }
      return { backfill, tail, memoryLarge };
    } finally {
      await syncDatabase.drop().catch(() => undefined);
    }
  } finally {
    await simulator.close();
  }
}

async function runTail(
  context: BenchContext,
  input: {
    simulator: Awaited<ReturnType<typeof startSimulatorProcess>>;
    database: ScenarioDatabase;
    history: number;
  },
): Promise<TailFigures> {
  const { simulator, database } = input;
  const newRecords = context.options.tailRecords;
  context.log(`tail: ${newRecords} new records on top of ${input.history}`);
  await simulator.addRecords(newRecords);
  const statsBefore = await simulator.stats();
  const expectedRows = await simulator.dump(join(context.tmpDir, 'tail.ndjson'));
  const run = await runIndexerSync(context.setup, {
    label: 'ledger-indexer sync (tail)',
    simulator,
    database,
    expectedRows,
  });
  const statsAfter = await simulator.stats();
  return {
    history: input.history,
    newRecords,
    pagesRequested: listPagesServed(statsAfter) - listPagesServed(statsBefore),
    idealPages: Math.ceil(newRecords / 10) + 1,
    requestsServed: requestsServed(statsAfter) - requestsServed(statsBefore),
    wallMs: Math.round(run.wallMs),
    rows: run.rows,
    expectedRows,
    rowsMatch: run.rows === expectedRows,
    peakRssBytes: run.peakRssBytes,
  };
}

/** Scenario 2: backfill of `latencyRecords` with `latencyMs` added to every request. */
export async function runLatencyScenario(context: BenchContext): Promise<LatencyFigures> {
  const { options, setup } = context;
  context.log(`latency: ${options.latencyRecords} records, ${options.latencyMs} ms per request`);
  const simulator = await startSimulatorProcess(
    { records: options.latencyRecords, ...simulatorBase(options), faults: { latencyMs: options.latencyMs } },
    setup.root,
  );
  try {
    const expectedRows = await simulator.dump(join(context.tmpDir, 'latency.ndjson'));
    const run = await usingDatabase(await freshDatabase(context, 'latency'), (database) =>
      runIndexerSync(setup, {
        label: `ledger-indexer sync, ${options.latencyMs} ms added per request`,
        simulator,
        database,
        expectedRows,
      }),
    );
    return {
      records: options.latencyRecords,
      latencyMs: options.latencyMs,
      concurrency: options.concurrency,
      run: stripStdout(run),
      idealRowsPerSecond: (options.concurrency * 10) / (options.latencyMs / 1000),
    };
  } finally {
    await simulator.close();
  }
}

/** Scenario 5, small point: peak memory of a backfill of `memorySmallRecords` (median of the repeats). */
export async function runMemorySmall(context: BenchContext): Promise<MemoryPoint> {
  const { options, setup } = context;
  const records = options.memorySmallRecords;
  context.log(`memory: backfill of ${records} records`);
  const simulator = await startSimulatorProcess({ records, ...simulatorBase(options) }, setup.root);
  try {
    const expectedRows = await simulator.dump(join(context.tmpDir, 'memory.ndjson'));
    const run = await medianRun(options.repeats, async () =>
      usingDatabase(await freshDatabase(context, 'memory'), (database) =>
        runIndexerSync(setup, { label: 'ledger-indexer sync (memory)', simulator, database, expectedRows }),
      ),
    );
    if (run.rowsMatch !== true) throw new Error(`memory run stored ${run.rows} rows of ${expectedRows}`);
    return {
      records,
      peakRssBytes: run.peakRssBytes,
      wallMs: Math.round(run.wallMs),
      rowsPerSecond: run.rowsPerSecond,
    };
  } finally {
    await simulator.close();
  }
}

/** Runs `fn`; a failure becomes a "not run" figure with its one-line reason. */
export async function attempt<T>(fn: () => Promise<T>): Promise<Maybe<T>> {
  try {
    return await fn();
  } catch (error) {
    return { notRun: reason(error) };
  }
}

function stripStdout<T extends { stdout: string }>(run: T): Omit<T, 'stdout'> {
  const { stdout: _stdout, ...rest } = run;
  return rest;
}
