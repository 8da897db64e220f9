/**
 * Runs a hand-written batch script the way its user would: compiled to one JavaScript file and
 * started with `node` in a process of its own, cold, timed from spawn to exit as `sync` is (its
 * start, its connection and its table included). The script's own clock, from its first request
 * to its last write, is kept in the run's note.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { type ThroughputRun, throughput } from './figures.js';
import { lastLine } from './indexer-sync.js';
import type { Dialect } from './options.js';
import { spawnMeasured } from './processes.js';

const entry = new URL('./script-process.ts', import.meta.url).pathname;
const bundles = new Map<string, Promise<string>>();

/** The scripts' program, bundled once per folder (pg, undici and all, as `sync`'s bundle holds them). */
function scriptBundle(tmpDir: string): Promise<string> {
  let bundle = bundles.get(tmpDir);
  if (bundle === undefined) {
    const outfile = join(tmpDir, 'batch-script.mjs');
    bundle = build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      outfile,
      external: ['pg-native'],
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
      logLevel: 'warning',
    }).then(() => outfile);
    bundles.set(tmpDir, bundle);
  }
  return bundle;
}

/** Runs the batch script of `dialect` once in its own process against `baseUrl`, into `databaseUrl` (migrated). */
export async function runScriptProcess(
  dialect: Dialect,
  input: { tmpDir: string; cwd: string; baseUrl: string; databaseUrl: string; expectedRows: number },
): Promise<ThroughputRun> {
  const program = await scriptBundle(input.tmpDir);
  const child = spawnMeasured({
    nodeArgs: [program, dialect, input.baseUrl, input.databaseUrl, String(input.expectedRows)],
    env: { ...process.env, NODE_ENV: 'production' },
    cwd: input.cwd,
    label: `batch-script-${dialect}`,
  });
  const result = await child.exited;
  if (result.code !== 0) {
    throw new Error(
      `batch script exited with ${result.code ?? result.signal}: ${lastLine(result.stderrTail)}`,
    );
  }
  const own = JSON.parse(lastLine(result.stdout)) as ThroughputRun;
  return throughput({
    label: `${own.label}; its own process, from spawn to exit`,
    rows: own.rows,
    expectedRows: own.expectedRows,
    wallMs: result.wallMs,
    pagesRequested: own.pagesRequested,
    peakRssBytes: result.peakRssBytes,
    peakRssPerProcessBytes: [result.peakRssBytes],
    cpuMs: result.cpuMs === null ? null : Math.round(result.cpuMs),
    ...(own.listRequests ? { listRequests: own.listRequests } : {}),
    note: `its own clock, first request to last write: ${(own.wallMs / 1000).toFixed(2)} s`,
  });
}
