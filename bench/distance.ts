/**
 * Scenario "distance": the service as far away as the real one (every answer 200 ms late) and
 * rate-limited per client as the real one is, the indexer at its default request budget. What
 * limits a backfill there is the budget, so each run is measured against it: records a second ÷
 * (budget × records a request). `sync` by key and by page number at the default budget of 50,
 * four workers by key at the same budget (shared in Redis), `sync` by key at 100, and a tail far
 * behind: a mirror of the list (backfilled unmeasured), a quarter of it again added at once, then
 * `sync` at 50 catching up, measured on the new records alone.
 */
import { join } from 'node:path';
import { PAGE_SIZE } from '../src/defaults.js';
import type { SimulatorStats } from '../src/simulator/types.js';
import { type BenchContext, freshDatabase, usingDatabase } from './context.js';
import type { ScenarioDatabase } from './databases.js';
import { isNotRun, type Maybe, round, type ThroughputRun } from './figures.js';
import { runHttpCeiling } from './http-ceiling.js';
import { inDialect, runIndexerSync } from './indexer-sync.js';
import { runIndexerWorkers } from './indexer-workers.js';
import { KEY_COUNT, listPages } from './list-pages.js';
import { type Dialect, dialectName, simulatorBase } from './options.js';
import { startPrivateRedis } from './redis-server.js';
import type { Target } from './report.js';
import { notRunRow, type Row, runRow } from './report-rows.js';
import { attempt, stripStdout } from './scenarios.js';
import { requestsServed, type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';

/** Added to every answer: the middle of the real service's 100–300 ms. */
export const DISTANCE_LATENCY_MS = 200;
/** The indexer's default budget (`LEDGER_REQUESTS_PER_SECOND`), and the higher one measured. */
const BUDGETS = [50, 100] as const;
/**
 * The service's own limit per client, above the indexer's budget as a deployment sets it: a
 * client that keeps to its budget is never refused; one that bursts past it is.
 */
const SERVICE_LIMIT_FACTOR = 1.2;

/** The records added for the catch-up run, as a share of the list. */
const CATCH_UP_SHARE = 0.25;

/** One run 200 ms away. */
export interface DistanceRun {
  /** `sync`, `workers` (the worker processes of the scenario), or `catch-up` (`sync` of a tail far behind). */
  what: 'sync' | 'workers' | 'catch-up';
  dialect: Dialect;
  requestsPerSecond: number;
  run: Maybe<Omit<ThroughputRun, 'stdout'>>;
  /** `requestsPerSecond × records a request`: what the budget allows. */
  idealRowsPerSecond: number;
  /** Requests of every kind the service answered during the run, and those it refused (429). */
  requests: number | null;
  refused: number | null;
}

/** What the scenario measured. */
export interface DistanceFigures {
  latencyMs: number;
  /** Records of the list read by key, and of the one read by page number (ten a request: fewer). */
  keyRecords: number;
  pageRecords: number;
  workerProcesses: number;
  runs: DistanceRun[];
}

/** Runs the scenario; each run on a fresh database, the simulator's limit set to the run's budget. */
export async function runDistanceScenario(
  context: BenchContext,
  dialects: Dialect[],
): Promise<DistanceFigures> {
  const { options } = context;
  const keyRecords = options.quick ? Math.min(20_000, options.records) : 200_000;
  // By page number the budget allows a tenth as many records a second: 10,000 (20 s) is as long a
  // run as a tenth of the key list would be, and half the bench time.
  const pageRecords = Math.ceil(keyRecords / 20);
  const runs: DistanceRun[] = [];
  const plans: Array<{ what: DistanceRun['what']; dialect: Dialect; rate: number }> = [];
  if (dialects.includes('key')) {
    plans.push({ what: 'sync', dialect: 'key', rate: BUDGETS[0] });
    plans.push({ what: 'workers', dialect: 'key', rate: BUDGETS[0] });
    plans.push({ what: 'sync', dialect: 'key', rate: BUDGETS[1] });
    // Last: it adds records to the simulator's list.
    plans.push({ what: 'catch-up', dialect: 'key', rate: BUDGETS[0] });
  }
  if (dialects.includes('page')) plans.push({ what: 'sync', dialect: 'page', rate: BUDGETS[0] });
  for (const dialect of dialects) {
    const records = dialect === 'key' ? keyRecords : pageRecords;
    context.log(`distance: ${records} records, ${DISTANCE_LATENCY_MS} ms away (${dialectName(dialect)})`);
    const simulator = await startSimulatorProcess({ records, ...simulatorBase(options) }, context.setup.root);
    try {
      const expectedRows = await simulator.dump(join(context.tmpDir, `distance-${dialect}.ndjson`));
      // The simulator renders a record's JSON on its first request (a signature and a hash each):
      // served first inside the run measured first, that work stalled its event loop for 100-200
      // ms at a time on the shared cores, arrivals bunched past its limit and were refused, where
      // the real service's limiter does not wait on its rendering. One pass nearby fills the cache.
      await runHttpCeiling({ baseUrl: simulator.url, concurrency: options.concurrency, expectedRows });
      await simulator.setFaults({ latencyMs: DISTANCE_LATENCY_MS });
      for (const plan of plans.filter((p) => p.dialect === dialect)) {
        context.log(`distance: ${plan.what}, ${plan.rate} requests a second (${dialectName(dialect)})`);
        runs.push(await measureRun(context, simulator, expectedRows, plan));
      }
    } finally {
      await simulator.close();
    }
  }
  return {
    latencyMs: DISTANCE_LATENCY_MS,
    keyRecords,
    pageRecords,
    workerProcesses: options.workerProcesses,
    runs,
  };
}

async function measureRun(
  context: BenchContext,
  simulator: SimulatorProcess,
  expectedRows: number,
  plan: { what: DistanceRun['what']; dialect: Dialect; rate: number },
): Promise<DistanceRun> {
  const { what, dialect, rate } = plan;
  await simulator.setFaults({ requestBudgetPerSecond: Math.ceil(rate * SERVICE_LIMIT_FACTOR) });
  const setup = { ...inDialect(context.setup, dialect), requestsPerSecond: rate };
  const before = await simulator.stats();
  const name = `distance_${what}_${dialect}_${rate}`;
  const run = await attempt(async () =>
    usingDatabase(await freshDatabase(context, name), async (database) => {
      if (what === 'catch-up') return measureCatchUp(context, { setup, simulator, database, expectedRows });
      if (what === 'sync') {
        return stripStdout(
          await runIndexerSync(setup, {
            label: `ledger-indexer sync, ${DISTANCE_LATENCY_MS} ms away, ${rate} requests a second, ${dialectName(dialect)}`,
            simulator,
            database,
            expectedRows,
          }),
        );
      }
      const redis = await startPrivateRedis();
      try {
        return await runIndexerWorkers(setup, {
          simulator,
          database,
          expectedRows,
          processes: context.options.workerProcesses,
          redisUrl: redis.url,
        });
      } finally {
        await redis.stop();
      }
    }),
  );
  const after = await simulator.stats();
  return {
    what,
    dialect,
    requestsPerSecond: rate,
    run,
    idealRowsPerSecond: rate * (dialect === 'key' ? KEY_COUNT : 10),
    requests: isNotRun(run) ? null : requestsServed(after) - requestsServed(before),
    refused: isNotRun(run) ? null : refusedBetween(before, after),
  };
}

/**
 * A tail far behind: the list mirrored first (at the higher budget, not measured), then a quarter
 * of it again added at once and synced at the run's budget, its rate that of the new records.
 */
async function measureCatchUp(
  context: BenchContext,
  input: {
    setup: ReturnType<typeof inDialect> & { requestsPerSecond: number };
    simulator: SimulatorProcess;
    database: ScenarioDatabase;
    expectedRows: number;
  },
): Promise<Omit<ThroughputRun, 'stdout'>> {
  const { setup, simulator, database, expectedRows } = input;
  const label = `ledger-indexer sync of a tail far behind, ${DISTANCE_LATENCY_MS} ms away, ${setup.requestsPerSecond} requests a second`;
  const limit = (rate: number) =>
    simulator.setFaults({ requestBudgetPerSecond: Math.ceil(rate * SERVICE_LIMIT_FACTOR) });
  await limit(BUDGETS[1]);
  await runIndexerSync(
    { ...setup, requestsPerSecond: BUDGETS[1] },
    { label: `${label} (its backfill)`, simulator, database, expectedRows },
  );
  const added = Math.round(expectedRows * CATCH_UP_SHARE);
  await simulator.addRecords(added);
  const total = await simulator.dump(join(context.tmpDir, 'distance-catch-up.ndjson'));
  await renderNewest(context, simulator, added);
  await limit(setup.requestsPerSecond);
  const run = stripStdout(await runIndexerSync(setup, { label, simulator, database, expectedRows: total }));
  // Measured on the new records: what the tail read and stored.
  const rows = run.rows - expectedRows;
  return {
    ...run,
    rows,
    expectedRows: total - expectedRows,
    rowsPerSecond: run.wallMs > 0 ? round((rows * 1000) / run.wallMs, 1) : 0,
  };
}

/**
 * Reads the newest `records` of the list once nearby, unlimited, before the run: the simulator
 * renders a record the first time it serves it, and the records added for the catch-up would
 * otherwise be rendered inside it, stalling the simulator's limiter as the list's first reads did
 * (see the warm-up in {@link runDistanceScenario}): one request refused each time, its second's
 * pause a tenth of the run.
 */
async function renderNewest(
  context: BenchContext,
  simulator: SimulatorProcess,
  records: number,
): Promise<void> {
  await simulator.setFaults({ latencyMs: 0, requestBudgetPerSecond: 0 });
  const pages = listPages(simulator.url, context.options.concurrency, 'catch-up warm-up');
  try {
    let next = 1;
    const last = Math.ceil(records / PAGE_SIZE) + 1;
    const lane = async (): Promise<void> => {
      for (let page = next++; page <= last; page = next++) await pages.fetchPage(page);
    };
    await Promise.all(Array.from({ length: context.options.concurrency }, lane));
  } finally {
    await pages.close();
    await simulator.setFaults({ latencyMs: DISTANCE_LATENCY_MS });
  }
}

/** 429 answers served between two readings of the simulator's stats. */
function refusedBetween(before: SimulatorStats, after: SimulatorStats): number {
  const refused = (stats: SimulatorStats) =>
    Object.entries(stats)
      .filter(([route]) => !route.includes('/_sim/'))
      .reduce((sum, [, byStatus]) => sum + (byStatus['429'] ?? 0), 0);
  return refused(after) - refused(before);
}

/** A run's records a second as a share of what its budget allows; null when it did not run. */
export function shareOfBudget(run: DistanceRun): number | null {
  return isNotRun(run.run) ? null : round(run.run.rowsPerSecond / run.idealRowsPerSecond);
}

/** The terminal report's lines of the scenario: one a run, its share of the budget and refusals in the note. */
export function distanceRows(figures: Maybe<DistanceFigures>): Row[] {
  if (isNotRun(figures)) return [notRunRow('distance', figures.notRun)];
  return figures.runs.map((r) => {
    const records = r.dialect === 'key' ? figures.keyRecords : figures.pageRecords;
    const name =
      r.what === 'sync'
        ? 'indexer sync'
        : r.what === 'catch-up'
          ? 'indexer sync of a tail far behind'
          : `indexer workers (${figures.workerProcesses})`;
    const listed =
      r.what === 'catch-up' ? `${Math.round(records * CATCH_UP_SHARE)} new on ${records}` : `${records}`;
    const row = runRow(
      `distance ${figures.latencyMs} ms, ${listed}${r.dialect === 'key' ? ' by key' : ''}`,
      `${name}, budget ${r.requestsPerSecond}/s`,
      r.run,
    );
    const share = shareOfBudget(r);
    if (share !== null) {
      const refused = r.requests ? round(((r.refused ?? 0) * 100) / r.requests, 2) : null;
      row[8] = [
        `${share} of the budget's ${r.idealRowsPerSecond} rows/s; ${refused ?? '—'} % refused (429)`,
        row[8],
      ]
        .filter(Boolean)
        .join('; ');
    }
    return row;
  });
}

/** The scenario's targets: the budget's share at the distance, refusals, requests, mirrors equal. */
export function judgeDistanceTargets(figures: Maybe<DistanceFigures>): Target[] {
  if (isNotRun(figures)) return [];
  const targets: Target[] = [];
  const add = (name: string, target: string, value: number | null, ok: (v: number) => boolean) =>
    targets.push({ name, target, value, met: value === null ? null : ok(value) });
  const find = (what: DistanceRun['what'], dialect: Dialect, rate: number) =>
    figures.runs.find((r) => r.what === what && r.dialect === dialect && r.requestsPerSecond === rate);
  const rate = (r: DistanceRun | undefined) =>
    r === undefined || isNotRun(r.run) ? null : r.run.rowsPerSecond;
  const at = `${figures.latencyMs} ms away`;
  add(`sync by key, ${at}, budget 50 (rows/s)`, '>= 4500', rate(find('sync', 'key', 50)), (v) => v >= 4500);
  add(
    `4 workers by key, ${at}, budget 50 (rows/s)`,
    '>= 4500',
    rate(find('workers', 'key', 50)),
    (v) => v >= 4500,
  );
  add(`sync by key, ${at}, budget 100 (rows/s)`, '>= 8500', rate(find('sync', 'key', 100)), (v) => v >= 8500);
  add(
    `sync by key of a tail far behind, ${at}, budget 50 (share of the budget)`,
    '>= 0.8',
    (() => {
      const run = find('catch-up', 'key', 50);
      return run === undefined ? null : shareOfBudget(run);
    })(),
    (v) => v >= 0.8,
  );
  add(
    `sync by page number, ${at}, budget 50 (rows/s)`,
    '>= 450',
    rate(find('sync', 'page', 50)),
    (v) => v >= 450,
  );
  const ran = figures.runs.filter((r) => !isNotRun(r.run) && r.requests);
  const refused = ran.reduce((n, r) => n + (r.refused ?? 0), 0);
  const requests = ran.reduce((n, r) => n + (r.requests ?? 0), 0);
  add(
    `refused (429) ÷ requests, ${at} (%)`,
    '<= 2',
    requests > 0 ? round((refused * 100) / requests, 2) : null,
    (v) => v <= 2,
  );
  const keyRuns = ran.filter((r) => r.dialect === 'key');
  const perHundred = keyRuns.map((r) => {
    const run = r.run as ThroughputRun;
    return run.listRequests && run.rows > 0
      ? (run.listRequests.key * 100) / run.rows
      : Number.POSITIVE_INFINITY;
  });
  add(
    `list requests per 100 records by key, ${at}`,
    '<= 1.05',
    perHundred.length > 0 ? round(Math.max(...perHundred), 4) : null,
    (v) => v <= 1.05,
  );
  const matched = ran.every((r) => (r.run as ThroughputRun).rowsMatch === true);
  add(
    `every mirror equal to the service, ${at}`,
    '= 1',
    ran.length > 0 ? (matched ? 1 : 0) : null,
    (v) => v === 1,
  );
  return targets;
}
