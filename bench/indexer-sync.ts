import { join } from 'node:path';
import type { ScenarioDatabase } from './databases.js';
import { type ThroughputRun, throughput } from './figures.js';
import type { IndexerRunner } from './indexer-runner.js';
import type { Dialect } from './options.js';
import { spawnMeasured } from './processes.js';
import { listPagesServed, listRequestsBetween, type SimulatorProcess } from './simulator-process.js';

/** What every measured indexer process is given. */
export interface IndexerSetup {
  runner: IndexerRunner;
  root: string;
  /** The harness's environment, passed on (minus what the benchmark sets itself). */
  env: Record<string, string | undefined>;
  concurrency: number;
  /** Node flags for every measured indexer process (e.g. `--cpu-prof --cpu-prof-dir D`). */
  nodeFlags: string[];
  /** Folder each process's debug log goes to (`<label>.log`); null = warnings only, not kept. */
  logDir: string | null;
  /** How the indexer reads the lists (`LEDGER_PAGING`). */
  paging: Dialect;
  /** The client's request budget (`LEDGER_REQUESTS_PER_SECOND`); 0 (unlimited) when absent. */
  requestsPerSecond?: number;
}

/** `setup` reading the lists in `paging`. */
export function inDialect(setup: IndexerSetup, paging: Dialect): IndexerSetup {
  return { ...setup, paging };
}

/**
 * The environment of a measured ledger-indexer process. The client-side request budget is
 * lifted (`LEDGER_REQUESTS_PER_SECOND=0`) unless the setup names one: the simulator on loopback
 * sets no limit, and the benchmark measures the indexer, not its politeness setting (except in
 * the scenario that measures what a budget allows).
 */
export function indexerEnv(
  setup: IndexerSetup,
  input: { databaseUrl: string; baseUrl: string; redisUrl?: string },
): Record<string, string | undefined> {
  return {
    ...setup.env,
    DATABASE_URL: input.databaseUrl,
    LEDGER_BASE_URL: input.baseUrl,
    REDIS_URL: input.redisUrl,
    LOG_LEVEL: setup.logDir === null ? 'warn' : 'debug',
    LEDGER_REQUESTS_PER_SECOND: String(setup.requestsPerSecond ?? 0),
    LEDGER_CONCURRENCY: String(setup.concurrency),
    LEDGER_PAGING: setup.paging,
    NODE_ENV: 'production',
  };
}

/** Where a measured process's log goes, by its label; null when logs are not kept. */
export function logFileOf(setup: IndexerSetup, label: string): string | null {
  return setup.logDir === null ? null : join(setup.logDir, `${label.replace(/[^\w.-]+/g, '_')}.log`);
}

/** One measured `sync`, with what it printed. */
export type SyncRun = ThroughputRun & { stdout: string };

/** Runs `ledger-indexer sync` once as a child process and measures it. */
export async function runIndexerSync(
  setup: IndexerSetup,
  input: {
    label: string;
    simulator: SimulatorProcess;
    database: ScenarioDatabase;
    expectedRows: number;
    /** More flags of `sync` (e.g. `--check-signatures`). */
    extraArgs?: string[];
  },
): Promise<SyncRun> {
  if (!setup.runner.hasCommand('sync')) throw new Error('the sync command has not landed');
  const before = listPagesServed(await input.simulator.stats());
  const listsBefore = await input.simulator.listRequests();
  const child = spawnMeasured({
    nodeArgs: [
      ...setup.nodeFlags,
      ...setup.runner.nodeArgs(['sync', '--base-url', input.simulator.url, ...(input.extraArgs ?? [])]),
    ],
    env: indexerEnv(setup, { databaseUrl: input.database.url, baseUrl: input.simulator.url }),
    cwd: setup.root,
    label: 'sync',
    logFile: logFileOf(setup, `sync-${input.label}`),
  });
  const result = await child.exited;
  if (result.code !== 0) {
    throw new Error(`sync exited with ${result.code ?? result.signal}: ${lastLine(result.stderrTail)}`);
  }
  const after = listPagesServed(await input.simulator.stats());
  const listRequests = listRequestsBetween(listsBefore, await input.simulator.listRequests());
  return {
    ...throughput({
      label: input.label,
      rows: await input.database.countRows(),
      expectedRows: input.expectedRows,
      wallMs: result.wallMs,
      pagesRequested: after - before,
      peakRssBytes: result.peakRssBytes,
      peakRssPerProcessBytes: [result.peakRssBytes],
      cpuMs: result.cpuMs === null ? null : Math.round(result.cpuMs),
      listRequests,
    }),
    stdout: result.stdout,
  };
}

export function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 400);
}
