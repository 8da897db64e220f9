import { parseArgs } from 'node:util';
import type { SimulatorOptions } from '../src/simulator/types.js';
import type { ServeOptions } from './serve-scenario.js';

/** Sizes and switches of one benchmark run. */
export interface BenchOptions {
  /** Records of the backfill scenario (and of the tail scenario's synced history). */
  records: number;
  /** Records of the backfill with added latency. */
  latencyRecords: number;
  /** Added latency per request in the latency scenario, ms. */
  latencyMs: number;
  /** New records of the tail scenario. */
  tailRecords: number;
  /** Records of the small memory run (the large one is the backfill scenario itself). */
  memorySmallRecords: number;
  /** Records present before the freshness scenario starts. */
  freshnessHistory: number;
  /** Arrivals per second during the freshness scenario. */
  freshnessArrivalsPerSecond: number;
  /** How long records arrive during the freshness scenario, ms. */
  freshnessDurationMs: number;
  /** Schedule of the workers in the freshness scenario. */
  freshnessEvery: string;
  /** Longest the hand-written baseline may run before its rate is taken from the leading slice, ms. */
  baselineBudgetMs: number;
  /**
   * Times the backfill's `sync` and batch script each run; the run of median wall time is
   * reported (one run of either moved by a third from one bench run to the next here).
   */
  repeats: number;
  /** Worker processes of the workers scenarios. */
  workerProcesses: number;
  /** Pages the indexer fetches at once (`LEDGER_CONCURRENCY`); the HTTP ceiling uses the same. */
  concurrency: number;
  /** Share of rawIds the simulators never publish (holes); null = the simulator's default. */
  holeRate: number | null;
  /** Share of arriving records the simulators make visible late; null = the simulator's default (0). */
  lateRate: number | null;
  /**
   * How the indexer reads the lists (`--paging`): `both` (default) measures the scenarios that
   * depend on it once by page numbers and once by key, side by side; `page` or `key` only one.
   */
  paging: Paging;
  /** Records of the scenario under a request budget. */
  budgetRecords: number;
  /** The indexer's request budget in that scenario (`LEDGER_REQUESTS_PER_SECOND`). */
  budgetRequestsPerSecond: number;
  /** How long a late record stays invisible, ms; null = the simulator's default (1500). */
  lateMs: number | null;
  /** Seed of every simulator. */
  seed: number;
  quick: boolean;
  /** Where the JSON goes besides `bench/results/latest.json`; null = only there. */
  out: string | null;
  /** Also write `bench/results/<date>-<cores>core.json`. */
  keep: boolean;
  /** Folder for CPU profiles of the indexer processes (`--cpu-prof`); null = no profiling. */
  cpuProfDir: string | null;
  /** Folder for the debug logs of the indexer processes (`--log-dir`); null = warnings only, kept in memory. */
  logDir: string | null;
  /** How the indexer processes run: compiled after `npm run build` (`dist`), or through `tsx`. */
  runner: 'dist' | 'tsx';
  /** Sizes of the serve scenario (the mirror served: read API and change feed). */
  serve: ServeOptions;
  /** Scenarios to run (all when empty). */
  only: string[];
}

/** A way of reading the lists: page numbers (ten a page) or by key (`cursor`, `count`). */
export type Dialect = 'page' | 'key';

/** The dialects a run measures. */
export type Paging = Dialect | 'both';

/** The dialects `paging` measures, page numbers first. */
export function dialectsOf(paging: Paging): Dialect[] {
  return paging === 'both' ? ['page', 'key'] : [paging];
}

/** The dialect in words, for logs and labels. */
export function dialectName(dialect: Dialect): string {
  return dialect === 'key' ? 'by key' : 'by page number';
}

export const SCENARIOS = [
  'backfill',
  'latency',
  'budget',
  'distance',
  'tail',
  'freshness',
  'status-freshness',
  'memory',
  'integrity',
  'serve',
] as const;

export const USAGE = `Usage: npm run bench -- [options]

  --records N        records of the backfill (default 200000; 2000000 for the memory ratio 2M / 200k),
                     and of the mirror the serve scenario serves (default 1000000; 20000 with --quick)
  --quick            small sizes for a quick look (backfill 20000 unless --records given)
  --only a,b         scenarios to run: ${SCENARIOS.join(', ')} (default all)
  --out PATH         also write the JSON here
  --keep             also write bench/results/<date>-<cores>core.json
  --hole-rate R      share of rawIds the simulators never publish (default: the simulator's, 0.01)
  --late-rate R      share of arriving records the simulators show late (default: the simulator's, 0)
  --late-ms MS       how long such a record stays invisible (default: the simulator's, 1500)
  --paging P         how the indexer reads the lists: both (default: page numbers and by key, 100 a
                     request, side by side on the same data), page or key
  --runner dist|tsx  run the indexer compiled (npm run build first; default) or through tsx
  --cpu-prof DIR     write CPU profiles of every indexer process into DIR (node --cpu-prof)
  --log-dir DIR      append each indexer process's log, at debug level, to DIR/<process>.log
  --seed S           simulator seed (default 42)
  --workers N        worker processes (default 4)
  --concurrency N    most requests in flight of the indexer (LEDGER_CONCURRENCY) and the HTTP ceiling (default 32)
  --repeats N        runs of the backfill's sync and batch script, the median reported (default 3; --quick 1)
`;

/** Parses the benchmark's command line. Throws with one line on a bad flag. */
export function parseBenchOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      records: { type: 'string' },
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      'log-dir': { type: 'string' },
      runner: { type: 'string' },
      'hole-rate': { type: 'string' },
      'late-rate': { type: 'string' },
      'late-ms': { type: 'string' },
      paging: { type: 'string' },
      seed: { type: 'string' },
      workers: { type: 'string' },
      concurrency: { type: 'string' },
      repeats: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) throw new HelpRequested();
  const quick = values.quick === true;
  const asked = whole('records', values.records, 10);
  const records = asked ?? (quick ? 20_000 : 200_000);
  const only = (values.only ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of only) {
    if (!(SCENARIOS as readonly string[]).includes(name))
      throw new Error(`--only: unknown scenario '${name}'`);
  }
  return {
    records,
    latencyRecords: quick ? Math.min(5_000, records) : 50_000,
    latencyMs: 50,
    budgetRecords: quick ? Math.min(5_000, records) : 50_000,
    budgetRequestsPerSecond: 50,
    tailRecords: quick ? Math.max(10, Math.min(1_000, Math.floor(records / 10))) : 1_000,
    memorySmallRecords: Math.max(10, Math.min(200_000, Math.floor(records / 2))),
    freshnessHistory: quick ? 500 : 2_000,
    freshnessArrivalsPerSecond: 50,
    freshnessDurationMs: quick ? 6_000 : 30_000,
    freshnessEvery: '1s',
    baselineBudgetMs: quick ? 3_000 : 20_000,
    repeats: whole('repeats', values.repeats, 1) ?? (quick ? 1 : 3),
    workerProcesses: whole('workers', values.workers, 1) ?? 4,
    concurrency: whole('concurrency', values.concurrency, 1) ?? 32,
    seed: whole('seed', values.seed, 0) ?? 42,
    quick,
    out: values.out ?? null,
    keep: values.keep === true,
    cpuProfDir: values['cpu-prof'] ?? null,
    logDir: values['log-dir'] ?? null,
    runner: runnerKind(values.runner),
    holeRate: fraction('hole-rate', values['hole-rate']),
    lateRate: fraction('late-rate', values['late-rate']),
    lateMs: whole('late-ms', values['late-ms'], 0) ?? null,
    paging: pagingOf(values.paging),
    serve: serveOptions(asked ?? (quick ? 20_000 : 1_000_000), quick),
    only,
  };
}

/**
 * The serve scenario's sizes: 64 clients of the read API for 10 s each run (2 s with `--quick`),
 * the feed with 10 then 1,000 SSE clients while ten tails of 20 records are written (two).
 */
function serveOptions(records: number, quick: boolean): ServeOptions {
  return {
    records,
    clients: 64,
    warmupMs: quick ? 500 : 2_000,
    durationMs: quick ? 2_000 : 10_000,
    hashSample: 10_000,
    feedClients: [10, 1_000],
    feedRounds: quick ? 2 : 10,
    feedRecordsPerRound: 20,
  };
}

function fraction(name: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  const parsed = Number(value);
  if (!/^\d*\.?\d+$/.test(value) || parsed > 1) throw new Error(`--${name} must be a number from 0 to 1`);
  return parsed;
}

function runnerKind(value: string | undefined): 'dist' | 'tsx' {
  if (value === undefined || value === 'dist') return 'dist';
  if (value === 'tsx') return 'tsx';
  throw new Error(`--runner must be dist or tsx (got '${value}')`);
}

function pagingOf(value: string | undefined): Paging {
  if (value === undefined || value === 'both') return 'both';
  if (value === 'page' || value === 'key') return value;
  throw new Error(`--paging must be both, page or key (got '${value}')`);
}

/** `--help` was asked for. */
export class HelpRequested extends Error {}

function whole(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new Error(`--${name} must be a whole number >= ${min}`);
  return Number(value);
}

/** What every simulator of a run shares: the seed, and the hole and late settings asked for. */
export function simulatorBase(
  options: BenchOptions,
): Pick<SimulatorOptions, 'seed' | 'holeRate' | 'lateRate' | 'lateMs'> {
  return {
    seed: options.seed,
    ...(options.holeRate === null ? {} : { holeRate: options.holeRate }),
    ...(options.lateRate === null ? {} : { lateRate: options.lateRate }),
    ...(options.lateMs === null ? {} : { lateMs: options.lateMs }),
  };
}
