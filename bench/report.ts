import type { DistanceFigures } from './distance.js';
import { isNotRun, type Maybe, type NotRun, requestsPerRow, round, type ThroughputRun } from './figures.js';
import type { FreshnessFigures } from './freshness.js';
import type { IntegrityFigures } from './integrity.js';
import type { MachineInfo } from './machine.js';
import type {
  BackfillFigures,
  BudgetFigures,
  LatencyFigures,
  MemoryPoint,
  TailFigures,
} from './scenarios.js';
import type { ServeFigures } from './serve-scenario.js';
import type { StatusFreshnessFigures } from './status-freshness.js';

/** The scenarios whose figures depend on how the indexer reads the lists, in one dialect. */
export interface DialectScenarios {
  backfill: Maybe<BackfillFigures>;
  latency: Maybe<LatencyFigures>;
  /** Absent in results from before the scenario. */
  budget?: Maybe<BudgetFigures>;
  tail: Maybe<TailFigures>;
  freshness: Maybe<FreshnessFigures>;
  statusFreshness: Maybe<StatusFreshnessFigures>;
}

/** Everything one benchmark run measured: the content of `bench/results/*.json`. */
export interface BenchResults {
  schema: 'ledger-indexer-bench/1';
  generatedAt: string;
  command: string;
  /** How the indexer processes ran: compiled (`dist`) or through `tsx`. */
  runner: 'dist' | 'tsx';
  /** The commit measured; `dirty` when the working tree had changes (the measured code may differ from it). */
  git: { commit: string | null; dirty: boolean };
  machine: MachineInfo;
  options: Record<string, unknown>;
  totalWallMs: number;
  /**
   * By page numbers (the keys of results from before the key dialect), and the scenarios that do
   * not depend on it (memory and integrity: by page numbers, or by key with `--paging key`).
   */
  scenarios: DialectScenarios & {
    memory: { small: Maybe<MemoryPoint>; large: Maybe<MemoryPoint> };
    integrity: Maybe<IntegrityFigures>;
  };
  /** The same scenarios by key (`count=100`), on the same data; absent in older results. */
  scenariosByKey?: Maybe<DialectScenarios>;
  ratios: Ratios;
  /** The ratios of {@link scenariosByKey}. */
  ratiosByKey?: Maybe<Ratios>;
  /** By key ÷ by page numbers, where both ran. */
  keyVsPage?: Maybe<KeyVsPage>;
  /** The service 200 ms away at the default budget (`bench/distance.ts`); absent in older results. */
  distance?: Maybe<DistanceFigures>;
  /** The mirror served: read API and change feed (`bench/serve-scenario.ts`); absent in older results. */
  serve?: Maybe<ServeFigures>;
  targets: Target[];
}

/** By key ÷ by page numbers, taken within one run. */
export interface KeyVsPage {
  /** Rows/s of the backfill's `sync`. */
  sync: Maybe<number>;
  /** Rows/s of the backfill's workers. */
  workers: Maybe<number>;
  /** Rows/s under the request budget. */
  budget: Maybe<number>;
  /** List requests per stored record of the backfill's `sync`. */
  requestsPerRecord: Maybe<number>;
}

export interface Ratios {
  /** Indexer rows/s ÷ the hand-written baseline's rows/s. */
  indexerVsBaseline: { sync: Maybe<number>; workers: Maybe<number> };
  /** Indexer rows/s ÷ the hand-written batch script's rows/s. */
  indexerVsBatchScript: { sync: Maybe<number>; workers: Maybe<number> };
  /** Four worker processes' rows/s ÷ one `sync`'s. */
  workersVsSync: Maybe<number>;
  /** Indexer rows/s ÷ the database ceiling (`COPY`). */
  indexerVsCopy: { sync: Maybe<number>; workers: Maybe<number> };
  /** Indexer rows/s ÷ min(HTTP ceiling, database ceiling) rows/s. */
  indexerVsCeiling: {
    sync: Maybe<number>;
    workers: Maybe<number>;
    /** Which ceiling is the lower one. */
    limitedBy: 'http' | 'database' | null;
  };
  /**
   * Twice the batch script's rows/s ÷ the fetch-and-store ceiling's: above 1, the target of twice
   * the script is beyond what any program fetching and storing the records reaches on this machine.
   */
  twiceScriptVsPipelineCeiling: Maybe<number>;
  /** `sync`'s rows/s ÷ the fetch-and-store ceiling's. */
  syncVsPipelineCeiling: Maybe<number>;
  /** Rows/s with added latency ÷ `concurrency × 10 ÷ latency`. */
  latencyVsIdeal: Maybe<number>;
  /** Pages the tail sync requested ÷ `ceil(new / 10) + 1`. */
  tailPagesVsIdeal: Maybe<number>;
  /** Peak RSS of the large backfill ÷ that of the small one (2M ÷ 200k with `--records 2000000`). */
  peakRss1mVs100k: Maybe<{ value: number; largeRecords: number; smallRecords: number }>;
  /** List requests (both dialects) per stored record of the backfill; absent in older results. */
  requestsPerRecord?: { sync: Maybe<number>; workers: Maybe<number> };
  /** Rows/s under the request budget ÷ `requestsPerSecond × recordsPerRequest`. */
  budgetVsIdeal?: Maybe<number>;
}

/**
 * A figure's target (the headline table of docs/performance.md) and whether this run met it. The benchmark
 * reports; it does not fail.
 */
export interface Target {
  name: string;
  target: string;
  value: number | null;
  met: boolean | null;
}

const notRun = (why: string): NotRun => ({ notRun: why });

function rate(run: Maybe<ThroughputRun> | undefined): Maybe<number> {
  if (run === undefined) return notRun('scenario not selected');
  if (isNotRun(run)) return run;
  if (run.rowsMatch === false && run.slice === undefined) {
    return notRun(`${run.label} stored ${run.rows} rows of ${run.expectedRows}`);
  }
  return run.rowsPerSecond;
}

function divide(a: Maybe<number>, b: Maybe<number>): Maybe<number> {
  if (isNotRun(a)) return a;
  if (isNotRun(b)) return b;
  return b > 0 ? round(a / b) : notRun('division by zero');
}

export function computeRatios(
  scenarios: DialectScenarios & { memory?: BenchResults['scenarios']['memory'] },
): Ratios {
  const backfill = isNotRun(scenarios.backfill) ? undefined : scenarios.backfill;
  const why = isNotRun(scenarios.backfill) ? scenarios.backfill : notRun('scenario not run');
  const sync = backfill ? rate(backfill.indexerSync) : why;
  const workers = backfill ? rate(backfill.indexerWorkers) : why;
  const baseline = backfill ? rate(backfill.baseline) : why;
  const script = backfill ? rate(backfill.batchBaseline) : why;
  const http = backfill ? rate(backfill.httpCeiling) : why;
  const database = backfill ? rate(backfill.dbCeiling) : why;
  const pipeline = backfill?.pipelineCeiling ? rate(backfill.pipelineCeiling) : why;
  let ceiling: Maybe<number> = notRun('no ceiling measured');
  let limitedBy: 'http' | 'database' | null = null;
  if (!isNotRun(http) && !isNotRun(database)) {
    ceiling = Math.min(http, database);
    limitedBy = http <= database ? 'http' : 'database';
  } else {
    ceiling = isNotRun(http) ? http : database;
  }
  const latency = scenarios.latency;
  const tail = scenarios.tail;
  const absent = notRun('measured by page numbers only');
  const { small, large } = scenarios.memory ?? { small: absent, large: absent };
  const budget = scenarios.budget ?? notRun('scenario not run');
  let memory: Ratios['peakRss1mVs100k'];
  if (isNotRun(small)) memory = small;
  else if (isNotRun(large)) memory = large;
  else if (small.peakRssBytes === null || large.peakRssBytes === null)
    memory = notRun('peak RSS not measured');
  else {
    memory = {
      value: round(large.peakRssBytes / small.peakRssBytes),
      largeRecords: large.records,
      smallRecords: small.records,
    };
  }
  return {
    indexerVsBaseline: { sync: divide(sync, baseline), workers: divide(workers, baseline) },
    indexerVsBatchScript: { sync: divide(sync, script), workers: divide(workers, script) },
    workersVsSync: divide(workers, sync),
    indexerVsCopy: { sync: divide(sync, database), workers: divide(workers, database) },
    indexerVsCeiling: { sync: divide(sync, ceiling), workers: divide(workers, ceiling), limitedBy },
    twiceScriptVsPipelineCeiling: divide(isNotRun(script) ? script : 2 * script, pipeline),
    syncVsPipelineCeiling: divide(sync, pipeline),
    latencyVsIdeal: isNotRun(latency) ? latency : divide(rate(latency.run), latency.idealRowsPerSecond),
    tailPagesVsIdeal: isNotRun(tail) ? tail : round(tail.pagesRequested / tail.idealPages),
    peakRss1mVs100k: memory,
    requestsPerRecord: {
      sync: backfill ? requestsPerRow(backfill.indexerSync) : why,
      workers: backfill ? requestsPerRow(backfill.indexerWorkers) : why,
    },
    budgetVsIdeal: isNotRun(budget) ? budget : divide(rate(budget.run), budget.idealRowsPerSecond),
  };
}

/** By key ÷ by page numbers, from the two dialects' figures of one run. */
export function compareDialects(
  page: DialectScenarios,
  key: DialectScenarios,
  ratios: { page: Ratios; key: Ratios },
): KeyVsPage {
  const backfillRate = (s: DialectScenarios, run: 'indexerSync' | 'indexerWorkers'): Maybe<number> =>
    isNotRun(s.backfill) ? s.backfill : rate(s.backfill[run]);
  const budgetRate = (s: DialectScenarios): Maybe<number> => {
    const budget = s.budget ?? notRun('scenario not run');
    return isNotRun(budget) ? budget : rate(budget.run);
  };
  const perRecord = (r: Ratios): Maybe<number> => r.requestsPerRecord?.sync ?? notRun('not counted');
  return {
    sync: divide(backfillRate(key, 'indexerSync'), backfillRate(page, 'indexerSync')),
    workers: divide(backfillRate(key, 'indexerWorkers'), backfillRate(page, 'indexerWorkers')),
    budget: divide(budgetRate(key), budgetRate(page)),
    requestsPerRecord: divide(perRecord(ratios.key), perRecord(ratios.page)),
  };
}

const best = (a: Maybe<number>, b: Maybe<number>): number | null => {
  const values = [a, b].filter((v): v is number => typeof v === 'number');
  return values.length > 0 ? Math.max(...values) : null;
};

type AddTarget = (name: string, target: string, value: number | null, ok: (v: number) => boolean) => void;

function targetList(): { targets: Target[]; add: AddTarget } {
  const targets: Target[] = [];
  return {
    targets,
    add: (name, target, value, ok) =>
      targets.push({ name, target, value, met: value === null ? null : ok(value) }),
  };
}

export function judgeTargets(results: Pick<BenchResults, 'ratios' | 'scenarios'>): Target[] {
  const { ratios, scenarios } = results;
  const { targets, add } = targetList();
  add(
    'indexer ÷ baseline',
    '>= 20',
    best(ratios.indexerVsBaseline.sync, ratios.indexerVsBaseline.workers),
    (v) => v >= 20,
  );
  add(
    'indexer ÷ min(HTTP ceiling, database ceiling)',
    '>= 0.6',
    best(ratios.indexerVsCeiling.sync, ratios.indexerVsCeiling.workers),
    (v) => v >= 0.6,
  );
  add('sync ÷ batch script', '>= 2', num(ratios.indexerVsBatchScript.sync), (v) => v >= 2);
  add('sync ÷ database ceiling (COPY)', '>= 0.6', num(ratios.indexerVsCopy.sync), (v) => v >= 0.6);
  add('4 workers ÷ sync', '>= 1', num(ratios.workersVsSync), (v) => v >= 1);
  add('latency scenario ÷ ideal', '>= 0.9', num(ratios.latencyVsIdeal), (v) => v >= 0.9);
  keepingCurrentTargets(add, scenarios, { suffix: '', perArrival: 0.3 });
  const memory = ratios.peakRss1mVs100k;
  add('peak RSS large ÷ small', '<= 1.3', isNotRun(memory) ? null : memory.value, (v) => v <= 1.3);
  const large = scenarios.memory.large;
  add(
    'peak RSS of the large backfill (MB)',
    '< 300',
    isNotRun(large) || large.peakRssBytes === null ? null : round(large.peakRssBytes / 1e6, 1),
    (v) => v < 300,
  );
  return targets;
}

/** List requests a backfill by key may spend besides one per 100 records (issue 25's "handful"). */
const FIXED_KEY_REQUESTS = 10;

/**
 * The key dialect's targets (issue 25), every name ending in ", by key"; none when the key
 * dialect was not measured.
 */
export function judgeKeyTargets(input: {
  scenarios: Maybe<DialectScenarios> | undefined;
  ratios: Maybe<Ratios> | undefined;
  records: number;
}): Target[] {
  const { scenarios, ratios } = input;
  if (scenarios === undefined || ratios === undefined || isNotRun(scenarios) || isNotRun(ratios)) return [];
  const { targets, add } = targetList();
  const perRecord = round(0.0102 + FIXED_KEY_REQUESTS / input.records, 5);
  for (const run of ['sync', 'workers'] as const) {
    add(
      `requests per stored record, ${run === 'sync' ? 'sync' : '4 workers'}, by key`,
      `<= ${perRecord}`,
      num(ratios.requestsPerRecord?.[run] ?? notRun('not counted')),
      (v) => v <= perRecord,
    );
  }
  const budget = scenarios.budget;
  const budgetRate = budget === undefined || isNotRun(budget) ? notRun('not run') : rate(budget.run);
  const floor = budget === undefined || isNotRun(budget) ? 4500 : 0.9 * budget.idealRowsPerSecond;
  const perSecond = budget === undefined || isNotRun(budget) ? 50 : budget.requestsPerSecond;
  add(`rows/s at ${perSecond} requests/s, sync, by key`, `>= ${floor}`, num(budgetRate), (v) => v >= floor);
  add('sync ÷ batch script, both by key', '>= 1', num(ratios.indexerVsBatchScript.sync), (v) => v >= 1);
  add('4 workers ÷ sync, by key', '>= 1', num(ratios.workersVsSync), (v) => v >= 1);
  keepingCurrentTargets(add, scenarios, { suffix: ', by key', perArrival: 0.08 });
  return targets;
}

/** The tail, freshness and status-freshness targets of one dialect. */
function keepingCurrentTargets(
  add: AddTarget,
  scenarios: DialectScenarios,
  how: { suffix: string; perArrival: number },
): void {
  const { suffix, perArrival } = how;
  const tail = scenarios.tail;
  add(
    `tail pages − ideal${suffix}`,
    '<= 1',
    isNotRun(tail) ? null : tail.pagesRequested - tail.idealPages,
    (v) => v <= 1,
  );
  const fresh = scenarios.freshness;
  add(`freshness p95 (ms)${suffix}`, '<= 2000', isNotRun(fresh) ? null : fresh.delayMs.p95, (v) => v <= 2000);
  const status = scenarios.statusFreshness;
  for (const mode of ['workers', 'sync'] as const) {
    const run = isNotRun(status) ? undefined : status.runs.find((r) => r.mode === mode);
    const limit = (run?.intervalMs ?? (mode === 'workers' ? 1000 : 2000)) + 2000;
    // A change never shown has no lag to rank: it misses the target whatever the p95 of the rest.
    const p95 = run ? run.all.p95 : null;
    add(
      `status change p95, ${mode} (ms)${suffix}`,
      `<= ${limit}, none missed`,
      p95,
      (v) => v <= limit && run?.all.missed === 0,
    );
    add(
      `requests per arrival, ${mode}${suffix}`,
      `<= ${perArrival}`,
      run ? run.requestsPerArrival : null,
      (v) => v <= perArrival,
    );
  }
}

function num(value: Maybe<number>): number | null {
  return typeof value === 'number' ? value : null;
}
