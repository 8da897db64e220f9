/**
 * `npm run bench`: measures ledger-indexer against a hand-written baseline and the machine's
 * limits, in one run, and reports ratios (absolute times drift on shared machines; ratios taken
 * within one run hold). Writes a table to the terminal and `bench/results/latest.json`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './context.js';
import { adminUrl, postgresVersion } from './databases.js';
import { judgeDistanceTargets, runDistanceScenario } from './distance.js';
import { isNotRun, type Maybe } from './figures.js';
import { runFreshnessScenario } from './freshness.js';
import { type DialectHistory, runHistoryScenarios } from './history-scenarios.js';
import { prepareIndexerRunner } from './indexer-runner.js';
import { inDialect } from './indexer-sync.js';
import { runIntegrityScenario } from './integrity.js';
import { describeMachine } from './machine.js';
import {
  type BenchOptions,
  type Dialect,
  dialectName,
  dialectsOf,
  HelpRequested,
  parseBenchOptions,
  type SCENARIOS,
  USAGE,
} from './options.js';
import { cleanPeakFiles } from './processes.js';
import {
  type BenchResults,
  compareDialects,
  computeRatios,
  type DialectScenarios,
  judgeKeyTargets,
  judgeTargets,
} from './report.js';
import { renderTable } from './report-table.js';
import {
  attempt,
  type MemoryPoint,
  runBudgetScenario,
  runLatencyScenario,
  runMemorySmall,
} from './scenarios.js';
import { judgeServeTargets } from './serve-report.js';
import { runServeScenario } from './serve-scenario.js';
import { runStatusFreshnessScenario } from './status-freshness.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

async function main(argv: string[]): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseBenchOptions(argv);
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(USAGE);
      return 0;
    }
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  const started = performance.now();
  const log = (message: string): void => {
    process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
  };
  const admin = adminUrl(process.env);
  const postgres = await postgresVersion(admin);
  if (postgres === null) {
    process.stderr.write(`bench: PostgreSQL at DATABASE_URL is not reachable\n`);
    return 1;
  }
  if (options.runner === 'dist') log('bundling the CLI unless dist/cli is newer than the sources');
  const runner = prepareIndexerRunner(root, options.runner);
  log(`indexer runs from ${runner.kind}`);
  const tmpDir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
  const context: BenchContext = {
    options,
    setup: {
      runner,
      root,
      env: withoutBenchSettings(process.env),
      concurrency: options.concurrency,
      nodeFlags:
        options.cpuProfDir === null ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(options.cpuProfDir)],
      logDir: options.logDir === null ? null : ensureDir(resolve(options.logDir)),
      // Memory and integrity read in the first dialect measured; the others are set per run.
      paging: dialectsOf(options.paging)[0]!,
    },
    admin,
    tmpDir,
    log,
  };
  const wants = (name: (typeof SCENARIOS)[number]): boolean =>
    options.only.length === 0 || options.only.includes(name);
  try {
    const measured = await measureDialects(context, wants);
    const small = wants('memory') ? await attempt(() => runMemorySmall(context)) : skipped;
    const integrity = wants('integrity') ? await attempt(() => runIntegrityScenario(context)) : skipped;
    const distance = wants('distance')
      ? await attempt(() => runDistanceScenario(context, dialectsOf(options.paging)))
      : skipped;
    const serve = wants('serve') ? await attempt(() => runServeScenario(context)) : skipped;
    const scenarios: BenchResults['scenarios'] = {
      ...measured.page,
      memory: { small, large: measured.memoryLarge },
      integrity,
    };
    const ratios = computeRatios(scenarios);
    const byKey = measured.key;
    const ratiosByKey = isNotRun(byKey) ? byKey : computeRatios(byKey);
    const results: BenchResults = {
      schema: 'ledger-indexer-bench/1',
      generatedAt: new Date().toISOString(),
      command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '),
      runner: runner.kind,
      git: gitState(),
      machine: describeMachine(postgres),
      options: { ...options },
      totalWallMs: Math.round(performance.now() - started),
      scenarios,
      scenariosByKey: byKey,
      ratios,
      ratiosByKey,
      keyVsPage:
        isNotRun(byKey) || isNotRun(ratiosByKey) || options.paging !== 'both'
          ? { notRun: `--paging ${options.paging}` }
          : compareDialects(scenarios, byKey, { page: ratios, key: ratiosByKey }),
      distance,
      serve,
      targets: [
        ...judgeTargets({ ratios, scenarios }),
        ...judgeDistanceTargets(distance),
        ...judgeKeyTargets({ scenarios: byKey, ratios: ratiosByKey, records: options.records }),
        ...judgeServeTargets(serve, wants('serve') ? options.serve : null),
      ],
    };
    writeResults(results, options);
    process.stdout.write(`${renderTable(results)}\n`);
    return 0;
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
    cleanPeakFiles();
  }
}

const skipped = { notRun: 'not selected (--only)' };

/** What {@link measureDialects} measured: each dialect's scenarios, and the large memory point. */
interface DialectResults {
  page: DialectScenarios;
  key: Maybe<DialectScenarios>;
  memoryLarge: Maybe<MemoryPoint>;
}

/**
 * The scenarios that depend on how the indexer reads the lists, in every dialect asked: the
 * backfill, latency and budget scenarios read one simulator per scenario in each dialect in turn
 * (the same data); freshness and status freshness run once per dialect.
 */
async function measureDialects(
  context: BenchContext,
  wants: (name: (typeof SCENARIOS)[number]) => boolean,
): Promise<DialectResults> {
  const dialects = dialectsOf(context.options.paging);
  // The large history serves the backfill, the tail and the large memory point only.
  const history =
    wants('backfill') || wants('tail') || wants('memory')
      ? await attempt(() =>
          runHistoryScenarios(context, {
            backfill: wants('backfill'),
            tail: wants('tail'),
            memoryLarge: wants('memory'),
          }),
        )
      : null;
  const latency = wants('latency')
    ? await attemptEach(dialects, () => runLatencyScenario(context, dialects))
    : null;
  const budget = wants('budget')
    ? await attemptEach(dialects, () => runBudgetScenario(context, dialects))
    : null;
  const inEach = async <T>(
    name: (typeof SCENARIOS)[number],
    run: (context: BenchContext) => Promise<T>,
    only: Dialect[] = dialects,
  ): Promise<Map<Dialect, Maybe<T>> | null> => {
    if (!wants(name)) return null;
    const figures = new Map<Dialect, Maybe<T>>();
    for (const dialect of dialects) {
      figures.set(
        dialect,
        only.includes(dialect)
          ? await attempt(() => run(inDialectContext(context, dialect)))
          : { notRun: `${dialectName(dialect)}: not with --quick (the full run measures it)` },
      );
    }
    return figures;
  };
  // --quick stays short (CI runs it): the workers' freshness, whose new records are read by the
  // same tail walk as in the tail scenario, runs in the first dialect only.
  const freshness = await inEach(
    'freshness',
    runFreshnessScenario,
    context.options.quick ? dialects.slice(0, 1) : dialects,
  );
  // So does the status freshness of the workers: by key, the `sync` loop only (its re-reads by
  // key are the behaviour to check; the workers' come from the scheduled re-read job).
  const statusFreshness = await inEach('status-freshness', (dialectContext) =>
    runStatusFreshnessScenario(
      dialectContext,
      context.options.quick && dialectContext.setup.paging === 'key' ? ['sync'] : ['workers', 'sync'],
    ),
  );
  const of = (dialect: Dialect): DialectScenarios => {
    const notMeasured = {
      notRun: `not measured ${dialectName(dialect)} (--paging ${context.options.paging})`,
    };
    const pick = <T>(map: Map<Dialect, Maybe<T>> | null): Maybe<T> =>
      map === null ? skipped : (map.get(dialect) ?? notMeasured);
    const fromHistory = <K extends 'backfill' | 'tail'>(part: K): Maybe<NonNullable<DialectHistory[K]>> => {
      if (!wants(part) || history === null) return skipped;
      if (isNotRun(history)) return history;
      const mine = history.byDialect[dialect];
      return mine === undefined ? notMeasured : (mine[part] ?? skipped);
    };
    return {
      backfill: fromHistory('backfill'),
      latency: pick(latency),
      budget: pick(budget),
      tail: fromHistory('tail'),
      freshness: pick(freshness),
      statusFreshness: pick(statusFreshness),
    };
  };
  const memoryLarge: Maybe<MemoryPoint> =
    !wants('memory') || history === null
      ? skipped
      : isNotRun(history)
        ? history
        : (history.memoryLarge ?? skipped);
  return {
    page: of('page'),
    key: dialects.includes('key') ? of('key') : { notRun: `--paging ${context.options.paging}` },
    memoryLarge,
  };
}

/** A scenario that measures every dialect at once; its failure is every dialect's. */
async function attemptEach<T>(
  dialects: Dialect[],
  run: () => Promise<Map<Dialect, Maybe<T>>>,
): Promise<Map<Dialect, Maybe<T>>> {
  const result = await attempt(run);
  return isNotRun(result) ? new Map(dialects.map((d) => [d, result])) : result;
}

/** `context` with its indexer processes reading in `dialect`, its log lines saying so. */
function inDialectContext(context: BenchContext, dialect: Dialect): BenchContext {
  return {
    ...context,
    setup: inDialect(context.setup, dialect),
    log: (message) => context.log(`${message} (${dialectName(dialect)})`),
  };
}

function writeResults(results: BenchResults, options: BenchOptions): void {
  const text = `${JSON.stringify(results, null, 2)}\n`;
  const folder = join(root, 'bench', 'results');
  mkdirSync(folder, { recursive: true });
  if (options.out !== null) {
    mkdirSync(dirname(options.out), { recursive: true });
    writeFileSync(options.out, text);
  } else {
    writeFileSync(join(folder, 'latest.json'), text);
  }
  if (options.keep) writeFileSync(keptName(folder, results.generatedAt.slice(0, 10)), text);
}

/** `<date>-<cores>core.json`, or with `b`, `c`… after the date: a later run of the day keeps the earlier. */
function keptName(folder: string, date: string): string {
  for (const suffix of ['', ...'bcdefghijklmnopqrstuvwxyz']) {
    const path = join(folder, `${date}${suffix}-${cpus().length}core.json`);
    if (!existsSync(path)) return path;
  }
  throw new Error(`bench --keep: every name for ${date} is taken in ${folder}`);
}

function gitState(): { commit: string | null; dirty: boolean } {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
  const status = spawnSync('git', ['status', '--porcelain', '--', 'src', 'workers'], {
    cwd: root,
    encoding: 'utf8',
  });
  return {
    commit: head.status === 0 ? head.stdout.trim() : null,
    dirty: status.status === 0 ? status.stdout.trim() !== '' : true,
  };
}

/** The harness's environment minus the settings the benchmark chooses for the indexer itself. */
/** Creates `dir` (and its parents) when missing; returns it. */
function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

function withoutBenchSettings(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const copy: Record<string, string | undefined> = { ...env };
  for (const key of Object.keys(copy)) {
    if (key.startsWith('LEDGER_') || key === 'REDIS_URL' || key === 'NODE_OPTIONS') delete copy[key];
  }
  return copy;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
