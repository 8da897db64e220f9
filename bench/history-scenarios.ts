/**
 * Scenario 1 (the backfill), scenario 3 (the tail) and the large point of scenario 5, on one
 * simulator of `records` records: every dialect measured reads the same data, in the same run.
 */
import { join } from 'node:path';
import { runBaseline } from './baseline.js';
import { type BenchContext, freshDatabase, usingDatabase } from './context.js';
import type { ScenarioDatabase } from './databases.js';
import { runDbCeiling } from './db-ceiling.js';
import { type Maybe, medianOfRuns, type ThroughputRun } from './figures.js';
import { runHttpCeiling, runKeyHttpCeiling } from './http-ceiling.js';
import { inDialect, runIndexerSync, type SyncRun } from './indexer-sync.js';
import { runIndexerWorkers } from './indexer-workers.js';
import { KEY_COUNT } from './list-pages.js';
import { type Dialect, dialectName, dialectsOf, simulatorBase } from './options.js';
import { runPipelineCeiling } from './pipeline-ceiling.js';
import { startPrivateRedis } from './redis-server.js';
import type { BackfillFigures, MemoryPoint, TailFigures } from './scenarios.js';
import { attempt, stripStdout } from './scenarios.js';
import { runScriptProcess } from './script-runner.js';
import {
  listPagesServed,
  listRequestsBetween,
  requestsServed,
  type SimulatorProcess,
  startSimulatorProcess,
} from './simulator-process.js';

type Wanted = { backfill: boolean; tail: boolean; memoryLarge: boolean };

/** What the history scenarios measured in one dialect. */
export interface DialectHistory {
  backfill: BackfillFigures | null;
  tail: Maybe<TailFigures> | null;
}

/** What the history scenarios measured: per dialect, and the large memory point (the first dialect's `sync`). */
export interface HistoryFigures {
  byDialect: Partial<Record<Dialect, DialectHistory>>;
  memoryLarge: Maybe<MemoryPoint> | null;
}

/** The runs of the backfill's rounds, per dialect. */
interface RoundRuns {
  sync: Maybe<SyncRun>[];
  workers: Maybe<ThroughputRun>[];
  script: Maybe<ThroughputRun>[];
}

/** The dialect-free comparisons of the backfill, measured once. */
interface SharedBackfill {
  baseline: Maybe<ThroughputRun>;
  httpCeiling: Maybe<ThroughputRun>;
  keyHttpCeiling: Maybe<ThroughputRun> | null;
  dbCeiling: Maybe<ThroughputRun>;
  pipelineCeiling: Maybe<ThroughputRun>;
}

/**
 * One simulator of `records` records, measured every way asked, each run into its own fresh
 * database: the backfill's `sync`, workers and batch script in rounds, each dialect in turn
 * within a round; the baselines and ceilings once; then the tail on each dialect's mirror.
 */
export async function runHistoryScenarios(context: BenchContext, wanted: Wanted): Promise<HistoryFigures> {
  const { options, setup } = context;
  const records = options.records;
  const dialects = dialectsOf(options.paging);
  context.log(`simulator: ${records} records, seed ${options.seed}`);
  // Every record's text stays cached after the warm-up pass, at any size: a larger history is
  // then served as cheaply as a small one, and only the indexer's side grows with it.
  const simulator = await startSimulatorProcess(
    { records, ...simulatorBase(options), arrivalsPerSecond: 0, jsonCacheSize: records },
    setup.root,
  );
  const syncDatabases = new Map<Dialect, ScenarioDatabase>();
  try {
    const truthFile = join(context.tmpDir, 'history.ndjson');
    const expectedRows = await simulator.dump(truthFile);
    // The simulator renders a record's JSON on first request and caches it: one unmeasured pass
    // over every page fills the cache, so the run measured first does not pay the rendering that
    // the runs after it are spared.
    context.log('simulator: warm-up pass over every page (not measured)');
    await runHttpCeiling({ baseUrl: simulator.url, concurrency: options.concurrency, expectedRows });
    for (const dialect of dialects) {
      syncDatabases.set(dialect, await freshDatabase(context, `backfill_sync_${dialect}`));
    }
    const runs = await runRounds(context, { simulator, expectedRows, syncDatabases, wanted });
    const byDialect: HistoryFigures['byDialect'] = {};
    const shared = wanted.backfill ? await runShared(context, { simulator, expectedRows, truthFile }) : null;
    const tails = wanted.tail
      ? await runTails(context, { simulator, runs, syncDatabases, history: expectedRows })
      : null;
    for (const dialect of dialects) {
      const dialectRuns = runs.get(dialect)!;
      const sync = medianOfRuns(dialectRuns.sync);
      const indexerSync = 'notRun' in sync ? sync : stripStdout(sync);
      byDialect[dialect] = {
        backfill:
          shared === null
            ? null
            : {
                records,
                indexerSync,
                indexerWorkers: medianOfRuns(dialectRuns.workers),
                baseline: shared.baseline,
                batchBaseline: medianOfRuns(dialectRuns.script),
                httpCeiling:
                  dialect === 'key' && shared.keyHttpCeiling ? shared.keyHttpCeiling : shared.httpCeiling,
                dbCeiling: shared.dbCeiling,
                pipelineCeiling: shared.pipelineCeiling,
              },
        tail: tails?.get(dialect) ?? null,
      };
    }
    const first = runs.get(dialects[0]!)!;
    return { byDialect, memoryLarge: wanted.memoryLarge ? memoryPoint(first, records) : null };
  } finally {
    for (const database of syncDatabases.values()) await database.drop().catch(() => undefined);
    await simulator.close();
  }
}

/** The large memory point: the median `sync` of the backfill. */
function memoryPoint(runs: RoundRuns, records: number): Maybe<MemoryPoint> {
  const sync = medianOfRuns(runs.sync);
  if ('notRun' in sync) return sync;
  return {
    records,
    peakRssBytes: sync.peakRssBytes,
    wallMs: Math.round(sync.wallMs),
    rowsPerSecond: sync.rowsPerSecond,
  };
}

/**
 * The backfill's headline runs, repeated in rounds of `sync`, the workers and the batch script,
 * each dialect in turn: the shared machine's speed drifts during a bench (a batch script run took
 * 15.3 s in one round and 11.4 s two rounds later), and alternating lets the drift reach all of
 * them alike instead of whichever ran while it was slow. The earlier `sync` runs get databases of
 * their own; the last one's history stays for the tail scenario.
 */
async function runRounds(
  context: BenchContext,
  input: {
    simulator: SimulatorProcess;
    expectedRows: number;
    syncDatabases: Map<Dialect, ScenarioDatabase>;
    wanted: Wanted;
  },
): Promise<Map<Dialect, RoundRuns>> {
  const { options } = context;
  const { simulator, expectedRows, syncDatabases } = input;
  const repeats = input.wanted.backfill ? options.repeats : 1;
  const runs = new Map<Dialect, RoundRuns>();
  for (const dialect of syncDatabases.keys()) runs.set(dialect, { sync: [], workers: [], script: [] });
  const each = async (
    what: string,
    round: number,
    measure: (dialect: Dialect) => Promise<ThroughputRun>,
    into: (r: RoundRuns) => Maybe<ThroughputRun>[],
  ): Promise<void> => {
    const of = repeats > 1 ? ` (round ${round} of ${repeats})` : '';
    for (const dialect of syncDatabases.keys()) {
      context.log(`backfill: ${what}, ${dialectName(dialect)}${of}`);
      into(runs.get(dialect)!).push(await attempt(() => measure(dialect)));
    }
  };
  for (let round = 1; round <= repeats; round++) {
    await each(
      'ledger-indexer sync',
      round,
      async (dialect) => {
        const setup = inDialect(context.setup, dialect);
        const syncInto = (database: ScenarioDatabase) =>
          runIndexerSync(setup, {
            label: `ledger-indexer sync (one process, ${dialectName(dialect)})`,
            simulator,
            database,
            expectedRows,
          });
        return round === repeats
          ? syncInto(syncDatabases.get(dialect)!)
          : usingDatabase(await freshDatabase(context, `backfill_sync_repeat_${dialect}`), syncInto);
      },
      (r) => r.sync,
    );
    if (!input.wanted.backfill) continue;
    await each(
      `ledger-indexer workers (${options.workerProcesses} processes)`,
      round,
      async (dialect) => {
        const redis = await startPrivateRedis();
        try {
          return await usingDatabase(
            await freshDatabase(context, `backfill_workers_${dialect}`),
            (database) =>
              runIndexerWorkers(inDialect(context.setup, dialect), {
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
      },
      (r) => r.workers,
    );
    await each(
      'hand-written batch script',
      round,
      async (dialect) =>
        usingDatabase(
          await freshDatabase(context, `backfill_script_${dialect}`, { migrate: true }),
          (database) =>
            runScriptProcess(dialect, {
              tmpDir: context.tmpDir,
              cwd: context.setup.root,
              baseUrl: simulator.url,
              databaseUrl: database.url,
              expectedRows,
            }),
        ),
      (r) => r.script,
    );
  }
  return runs;
}

/** The one-record-at-a-time baseline and the ceilings: the same whatever the indexer's dialect. */
async function runShared(
  context: BenchContext,
  input: { simulator: SimulatorProcess; expectedRows: number; truthFile: string },
): Promise<SharedBackfill> {
  const { options } = context;
  const { simulator, expectedRows, truthFile } = input;
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
  let keyHttpCeiling: Maybe<ThroughputRun> | null = null;
  if (dialectsOf(options.paging).includes('key')) {
    context.log('backfill: HTTP ceiling by key');
    keyHttpCeiling = await attempt(() => runKeyHttpCeiling({ baseUrl: simulator.url, expectedRows }));
  }
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
  return { baseline, httpCeiling, keyHttpCeiling, dbCeiling, pipelineCeiling };
}

/**
 * The tail: `tailRecords` new records added once, then each dialect's mirror (its last backfill
 * `sync`) synced again, so every dialect reads the same new records.
 */
async function runTails(
  context: BenchContext,
  input: {
    simulator: SimulatorProcess;
    runs: Map<Dialect, RoundRuns>;
    syncDatabases: Map<Dialect, ScenarioDatabase>;
    history: number;
  },
): Promise<Map<Dialect, Maybe<TailFigures>>> {
  const { simulator, history } = input;
  const newRecords = context.options.tailRecords;
  context.log(`tail: ${newRecords} new records on top of ${history}`);
  await simulator.addRecords(newRecords);
  const expectedRows = await simulator.dump(join(context.tmpDir, 'tail.ndjson'));
  const tails = new Map<Dialect, Maybe<TailFigures>>();
  for (const [dialect, database] of input.syncDatabases) {
    const synced = input.runs.get(dialect)!.sync.at(-1);
    if (synced === undefined || 'notRun' in synced) {
      tails.set(dialect, { notRun: `the history could not be synced: ${synced?.notRun ?? 'not run'}` });
      continue;
    }
    context.log(`tail: ledger-indexer sync, ${dialectName(dialect)}`);
    tails.set(
      dialect,
      await attempt(() =>
        runTail(context, { simulator, database, dialect, history, newRecords, expectedRows }),
      ),
    );
  }
  return tails;
}

async function runTail(
  context: BenchContext,
  input: {
    simulator: SimulatorProcess;
    database: ScenarioDatabase;
    dialect: Dialect;
    history: number;
    newRecords: number;
    expectedRows: number;
  },
): Promise<TailFigures> {
  const { simulator, database, newRecords, expectedRows } = input;
  const statsBefore = await simulator.stats();
  const listsBefore = await simulator.listRequests();
  const run = await runIndexerSync(inDialect(context.setup, input.dialect), {
    label: `ledger-indexer sync (tail, ${dialectName(input.dialect)})`,
    simulator,
    database,
    expectedRows,
  });
  const statsAfter = await simulator.stats();
  const perRequest = input.dialect === 'key' ? KEY_COUNT : 10;
  return {
    history: input.history,
    newRecords,
    pagesRequested: listPagesServed(statsAfter) - listPagesServed(statsBefore),
    listRequests: listRequestsBetween(listsBefore, await simulator.listRequests()),
    recordsPerRequest: perRequest,
    idealPages: Math.ceil(newRecords / perRequest) + 1,
    requestsServed: requestsServed(statsAfter) - requestsServed(statsBefore),
    wallMs: Math.round(run.wallMs),
    rows: run.rows,
    expectedRows,
    rowsMatch: run.rows === expectedRows,
    peakRssBytes: run.peakRssBytes,
  };
}
