import { join } from 'node:path';
import { type BenchContext, freshDatabase, usingDatabase } from './context.js';
import { isNotRun, type Maybe, medianRun, reason, type ThroughputRun } from './figures.js';
import { inDialect, runIndexerSync } from './indexer-sync.js';
import { KEY_COUNT } from './list-pages.js';
import { type Dialect, dialectName, simulatorBase } from './options.js';
import { startSimulatorProcess } from './simulator-process.js';

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
  /** List requests of the tail sync by dialect (key, page numbers). */
  listRequests?: { key: number; page: number };
  /** Records a list request holds: 10 by page number, 100 by key (absent in older results: 10). */
  recordsPerRequest?: number;
  /** `ceil(newRecords / recordsPerRequest) + 1`. */
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
  /**
   * `concurrency × records a request ÷ latency`: every request the ceiling allows in flight
   * (`LEDGER_CONCURRENCY`), ten records by page number, a hundred by key (before 2026-12-02 by
   * key: one in flight, a walk's one cursor). By key the machine, not the ceiling, is the limit.
   */
  idealRowsPerSecond: number;
}

/** Scenario "budget": a backfill under the client's request budget (`LEDGER_REQUESTS_PER_SECOND`). */
export interface BudgetFigures {
  records: number;
  requestsPerSecond: number;
  /** Records a list request holds: 10 by page number, 100 by key. */
  recordsPerRequest: number;
  run: ThroughputRun;
  /** `requestsPerSecond × recordsPerRequest`. */
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

/**
 * Scenario 2: backfill of `latencyRecords` with `latencyMs` added to every request, in each
 * dialect, from the same simulator.
 */
export async function runLatencyScenario(
  context: BenchContext,
  dialects: Dialect[],
): Promise<Map<Dialect, Maybe<LatencyFigures>>> {
  const { options, setup } = context;
  context.log(`latency: ${options.latencyRecords} records, ${options.latencyMs} ms per request`);
  const simulator = await startSimulatorProcess(
    { records: options.latencyRecords, ...simulatorBase(options), faults: { latencyMs: options.latencyMs } },
    setup.root,
  );
  const figures = new Map<Dialect, Maybe<LatencyFigures>>();
  try {
    const expectedRows = await simulator.dump(join(context.tmpDir, 'latency.ndjson'));
    for (const dialect of dialects) {
      context.log(`latency: ledger-indexer sync, ${dialectName(dialect)}`);
      const measured = await attempt(async () =>
        usingDatabase(await freshDatabase(context, `latency_${dialect}`), (database) =>
          runIndexerSync(inDialect(setup, dialect), {
            label: `ledger-indexer sync, ${options.latencyMs} ms added per request, ${dialectName(dialect)}`,
            simulator,
            database,
            expectedRows,
          }),
        ),
      );
      const perSecond = 1000 / options.latencyMs;
      figures.set(
        dialect,
        isNotRun(measured)
          ? measured
          : {
              records: options.latencyRecords,
              latencyMs: options.latencyMs,
              concurrency: options.concurrency,
              run: stripStdout(measured),
              idealRowsPerSecond: options.concurrency * (dialect === 'key' ? KEY_COUNT : 10) * perSecond,
            },
      );
    }
    return figures;
  } finally {
    await simulator.close();
  }
}

/**
 * Scenario "budget": a backfill of `budgetRecords` with the client's request budget at
 * `budgetRequestsPerSecond` (the indexer's default, 50), in each dialect, from the same simulator.
 */
export async function runBudgetScenario(
  context: BenchContext,
  dialects: Dialect[],
): Promise<Map<Dialect, Maybe<BudgetFigures>>> {
  const { options, setup } = context;
  const rate = options.budgetRequestsPerSecond;
  context.log(`budget: ${options.budgetRecords} records, ${rate} requests a second`);
  const simulator = await startSimulatorProcess(
    { records: options.budgetRecords, ...simulatorBase(options) },
    setup.root,
  );
  const figures = new Map<Dialect, Maybe<BudgetFigures>>();
  try {
    const expectedRows = await simulator.dump(join(context.tmpDir, 'budget.ndjson'));
    for (const dialect of dialects) {
      context.log(`budget: ledger-indexer sync, ${dialectName(dialect)}`);
      const perRequest = dialect === 'key' ? KEY_COUNT : 10;
      const measured = await attempt(async () =>
        usingDatabase(await freshDatabase(context, `budget_${dialect}`), (database) =>
          runIndexerSync(
            { ...inDialect(setup, dialect), requestsPerSecond: rate },
            {
              label: `ledger-indexer sync, ${rate} requests a second, ${dialectName(dialect)}`,
              simulator,
              database,
              expectedRows,
            },
          ),
        ),
      );
      figures.set(
        dialect,
        isNotRun(measured)
          ? measured
          : {
              records: options.budgetRecords,
              requestsPerSecond: rate,
              recordsPerRequest: perRequest,
              run: stripStdout(measured),
              idealRowsPerSecond: rate * perRequest,
            },
      );
    }
    return figures;
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

export function stripStdout<T extends { stdout: string }>(run: T): Omit<T, 'stdout'> {
  const { stdout: _stdout, ...rest } = run;
  return rest;
}
