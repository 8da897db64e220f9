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
import { isNotRun, type Maybe } from './figures.js';
import { runFreshnessScenario } from './freshness.js';
import { prepareIndexerRunner } from './indexer-runner.js';
import { runIntegrityScenario } from './integrity.js';
import { describeMachine } from './machine.js';
import { type BenchOptions, HelpRequested, parseBenchOptions, type SCENARIOS, USAGE } from './options.js';
import { cleanPeakFiles } from './processes.js';
import { type BenchResults, computeRatios, judgeTargets } from './report.js';
import { renderTable } from './report-table.js';
import {
  attempt,
  type MemoryPoint,
  runHistoryScenarios,
  runLatencyScenario,
  runMemorySmall,
} from './scenarios.js';
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
  if (options.runner === 'dist') log('building the CLI');
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
      paging: options.paging,
    },
    admin,
    tmpDir,
    log,
  };
  const wants = (name: (typeof SCENARIOS)[number]): boolean =>
    options.only.length === 0 || options.only.includes(name);
  const skipped = { notRun: 'not selected (--only)' };
  try {
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
        : { backfill: null, tail: null, memoryLarge: null };
    const pick = <T>(value: T | null | undefined): Maybe<T> => value ?? skipped;
    const backfill = isNotRun(history) ? history : pick(history.backfill);
    const tail = isNotRun(history) ? history : pick(history.tail);
    const large: Maybe<MemoryPoint> = isNotRun(history) ? history : pick(history.memoryLarge);
    const latency = wants('latency') ? await attempt(() => runLatencyScenario(context)) : skipped;
    const freshness = wants('freshness') ? await attempt(() => runFreshnessScenario(context)) : skipped;
    const statusFreshness = wants('status-freshness')
      ? await attempt(() => runStatusFreshnessScenario(context))
      : skipped;
    const small = wants('memory') ? await attempt(() => runMemorySmall(context)) : skipped;
    const integrity = wants('integrity') ? await attempt(() => runIntegrityScenario(context)) : skipped;
    const scenarios: BenchResults['scenarios'] = {
      backfill: wants('backfill') ? backfill : skipped,
      latency,
      tail: wants('tail') ? tail : skipped,
      freshness,
      statusFreshness,
      memory: { small, large: wants('memory') ? large : skipped },
      integrity,
    };
    const ratios = computeRatios(scenarios);
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
      ratios,
      targets: judgeTargets({ ratios, scenarios }),
    };
    writeResults(results, options);
    process.stdout.write(`${renderTable(results)}\n`);
    return 0;
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
    cleanPeakFiles();
  }
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
