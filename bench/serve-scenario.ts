/**
 * Scenario "serve": the mirror served. A mirror of `serve.records` records is built the way a
 * user builds one (the simulator, then `ledger-indexer sync` by key with no budget), then
 * `ledger-indexer serve` runs over it as a process of its own on 127.0.0.1 and is measured from
 * the bench's process: list answers by key and look-ups by hash from 64 clients (read API), and
 * the change feed's commit-to-client time with a few and with a thousand SSE clients on a fresh
 * `serve`, its memory and its database listeners. The mirror is built once and kept for every
 * repeat of the run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { type BenchContext, freshDatabase, usingDatabase } from './context.js';
import type { ScenarioDatabase } from './databases.js';
import { isNotRun, type Maybe, type ThroughputRun } from './figures.js';
import { inDialect, runIndexerSync } from './indexer-sync.js';
import { simulatorBase } from './options.js';
import { type CoresUsed, startCpuMeter } from './proc-cpu.js';
import { spawnMeasured } from './processes.js';
import { attempt, stripStdout } from './scenarios.js';
import { type FeedPhaseFigures, runFeedPhase } from './serve-feed.js';
import { type LoadFigures, runClosedLoad } from './serve-load.js';
import { type ServeProcess, startServe } from './serve-process.js';
import { hashLookups, LIST_MIX, listRequests, type MirrorSample, sampleMirror } from './serve-requests.js';
import { type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';

/** Sizes of the serve scenario. */
export interface ServeOptions {
  /** Records of the mirror served (`--records`; default 1,000,000, 20,000 with `--quick`). */
  records: number;
  /** Concurrent clients of the read API's load runs. */
  clients: number;
  /** Unmeasured start of each load run, then its measured window, ms. */
  warmupMs: number;
  durationMs: number;
  /** Hashes of stored records sampled for the look-ups. */
  hashSample: number;
  /** SSE clients of each feed phase, in turn, on one `serve`. */
  feedClients: number[];
  /** Tails written during each feed phase, and the new records of each. */
  feedRounds: number;
  feedRecordsPerRound: number;
}

/** One load run of the read API, with who kept the cores busy meanwhile. */
export interface ServeLoadRun extends LoadFigures {
  /** Cores busy on average during the run: `serve`, its database backends, the bench (the load), the machine. */
  cpu: CoresUsed;
}

/** The read API's load runs of one kind: the run of median rate, every run's rate. */
export interface ServeLoad {
  median: ServeLoadRun;
  answersPerSecond: number[];
}

/** What the serve scenario measured. */
export interface ServeFigures {
  records: number;
  /** The mirror's build: `sync` by key, no budget, from an empty database. */
  build: Omit<ThroughputRun, 'stdout'>;
  /**
   * `ANALYZE` of the mirror after its build, ms: what autovacuum does on its own after a large
   * write, and this machine's server runs without autovacuum (the planner would have no
   * statistics of a table it never analyzed).
   */
  analyzeMs: number;
  /**
   * The same load against a server answering every request with one of serve's answers, stored
   * (no database, no rendering): what the load generator, the loopback and the machine allow.
   */
  ceiling: Maybe<{ lists: ServeLoadRun; lookups: ServeLoadRun }>;
  /** The list requests' kinds and shares. */
  listMix: Array<{ kind: string; share: number }>;
  lists: Maybe<ServeLoad>;
  lookups: Maybe<ServeLoad>;
  /** Peak memory of the `serve` that answered the load runs. */
  readServePeakRssBytes: number | null;
  /** One phase per entry of {@link ServeOptions.feedClients}, on one fresh `serve`. */
  feed: Array<Maybe<FeedPhaseFigures>>;
}

/** Runs the scenario on one simulator and one mirror, dropped at the end. */
export async function runServeScenario(context: BenchContext): Promise<ServeFigures> {
  const { options } = context;
  const sizes = options.serve;
  const setup = inDialect(context.setup, 'key');
  context.log(`serve: simulator of ${sizes.records} records`);
  const simulator = await startSimulatorProcess(
    { records: sizes.records, ...simulatorBase(options), arrivalsPerSecond: 0 },
    setup.root,
  );
  try {
    return await usingDatabase(await freshDatabase(context, 'serve'), async (database) => {
      context.log(`serve: building the mirror (sync by key, no budget)`);
      const built = await runIndexerSync(setup, {
        label: 'ledger-indexer sync by key, no budget (the mirror served)',
        simulator,
        database,
        expectedRows: await simulator.count(),
      });
      if (built.rowsMatch !== true)
        throw new Error(`the mirror holds ${built.rows} of ${built.expectedRows} records`);
      const analyzing = performance.now();
      await database.query('ANALYZE');
      const analyzeMs = Math.round(performance.now() - analyzing);
      const reads = await measureReads(context, database);
      const feed = await measureFeed(context, { simulator, database });
      return {
        records: sizes.records,
        build: stripStdout(built),
        analyzeMs,
        listMix: LIST_MIX.map(({ kind, share }) => ({ kind, share })),
        ...reads,
        feed,
      };
    });
  } finally {
    await simulator.close();
  }
}

/** The read API's load runs, `repeats` rounds of a list run then a look-up run, on one `serve`. */
async function measureReads(
  context: BenchContext,
  database: ScenarioDatabase,
): Promise<Pick<ServeFigures, 'lists' | 'lookups' | 'readServePeakRssBytes' | 'ceiling'>> {
  const sizes = context.options.serve;
  const serve = await startServe(inDialect(context.setup, 'key'), { database, label: 'serve-read-api' });
  try {
    const sample = await sampleMirror(database, sizes.hashSample);
    context.log(`serve: the ceiling, ${sizes.clients} clients against stored answers`);
    const ceiling = await attempt(() => measureCeiling(context, { serve, sample }));
    const lists: Array<Maybe<ServeLoadRun>> = [];
    const lookups: Array<Maybe<ServeLoadRun>> = [];
    for (let round = 0; round < context.options.repeats; round++) {
      const seed = context.options.seed + round;
      context.log(`serve: list answers by key, ${sizes.clients} clients (round ${round + 1})`);
      lists.push(
        await attempt(() =>
          measureLoad(context, { serve, database, sample, plan: listRequests(sample, seed) }),
        ),
      );
      context.log(`serve: look-ups by hash, ${sizes.clients} clients (round ${round + 1})`);
      lookups.push(
        await attempt(() =>
          measureLoad(context, { serve, database, sample, plan: hashLookups(sample, seed) }),
        ),
      );
    }
    return {
      lists: medianLoad(lists),
      lookups: medianLoad(lookups),
      readServePeakRssBytes: serve.peakRssBytes(),
      ceiling,
    };
  } finally {
    await serve.stop();
  }
}

async function measureLoad(
  context: BenchContext,
  input: {
    serve: ServeProcess;
    database: ScenarioDatabase;
    sample: MirrorSample;
    plan: Parameters<typeof runClosedLoad>[0]['next'];
  },
): Promise<ServeLoadRun> {
  const sizes = context.options.serve;
  const meter = await startCpuMeter({
    serve: () => [input.serve.pid],
    database: () => backendPids(input.database),
    bench: () => [process.pid],
  });
  const figures = await runClosedLoad({
    origin: input.serve.origin,
    clients: sizes.clients,
    warmupMs: sizes.warmupMs,
    durationMs: sizes.durationMs,
    next: input.plan,
  });
  return { ...figures, cpu: await meter.stop() };
}

/**
 * The ceiling: one full list answer and one look-up answer fetched from `serve`, stored, and
 * served by a process of their own to the same load.
 */
async function measureCeiling(
  context: BenchContext,
  input: { serve: ServeProcess; sample: MirrorSample },
): Promise<{ lists: ServeLoadRun; lookups: ServeLoadRun }> {
  const { serve, sample } = input;
  const fetchTo = async (path: string, file: string): Promise<string> => {
    const answer = await request(`${serve.origin}${path}`);
    if (answer.statusCode !== 200) throw new Error(`serve answered ${answer.statusCode} to ${path}`);
    writeFileSync(file, Buffer.from(await answer.body.arrayBuffer()));
    return file;
  };
  const lists = await fetchTo(
    `/txs?cursor=${sample.lowestRawId - 1}&order=asc&count=100`,
    join(context.tmpDir, 'serve-list.json'),
  );
  const lookups = await fetchTo(
    `/tx/${encodeURIComponent(sample.hashes[0]!)}`,
    join(context.tmpDir, 'serve-lookup.json'),
  );
  const child = spawnMeasured({
    nodeArgs: [
      '--import',
      'tsx',
      new URL('./answer-server-child.ts', import.meta.url).pathname,
      lists,
      lookups,
    ],
    env: { ...context.setup.env, NODE_ENV: 'production' },
    cwd: context.setup.root,
    label: 'answer-server',
  });
  try {
    const [, origin] = await child.waitForStdout(/listening (\S+)/, 30_000);
    const run = async (path: string): Promise<ServeLoadRun> => {
      const sizes = context.options.serve;
      const meter = await startCpuMeter({ server: () => [child.pid], bench: () => [process.pid] });
      const figures = await runClosedLoad({
        origin: origin!,
        clients: sizes.clients,
        warmupMs: sizes.warmupMs,
        durationMs: sizes.durationMs,
        next: () => ({ kind: path, path, check: () => ({ ok: true, records: 0, short: false }) }),
      });
      return { ...figures, cpu: await meter.stop() };
    };
    return { lists: await run('/list'), lookups: await run('/lookup') };
  } finally {
    child.child.kill('SIGTERM');
    await child.exited;
  }
}

/** The run of median rate among `runs`, every run's rate beside it; a failed run fails the whole. */
function medianLoad(runs: ReadonlyArray<Maybe<ServeLoadRun>>): Maybe<ServeLoad> {
  const failed = runs.find(isNotRun);
  if (failed) return failed;
  const done = [...(runs as ServeLoadRun[])].sort((a, b) => a.answersPerSecond - b.answersPerSecond);
  const median = done[Math.floor((done.length - 1) / 2)];
  if (median === undefined) return { notRun: 'no run' };
  return { median, answersPerSecond: (runs as ServeLoadRun[]).map((r) => r.answersPerSecond) };
}

/** The feed's phases, one per client count, on one fresh `serve` (its memory the feed's alone). */
async function measureFeed(
  context: BenchContext,
  input: { simulator: SimulatorProcess; database: ScenarioDatabase },
): Promise<Array<Maybe<FeedPhaseFigures>>> {
  const sizes = context.options.serve;
  const setup = inDialect(context.setup, 'key');
  const serve = await startServe(setup, { database: input.database, label: 'serve-feed' });
  const phases: Array<Maybe<FeedPhaseFigures>> = [];
  try {
    for (const clients of sizes.feedClients) {
      context.log(
        `serve: the feed with ${clients} SSE clients, ${sizes.feedRounds} tails of ${sizes.feedRecordsPerRound} records`,
      );
      phases.push(
        await attempt(() =>
          runFeedPhase({
            setup,
            serve,
            ...input,
            clients,
            rounds: sizes.feedRounds,
            recordsPerRound: sizes.feedRecordsPerRound,
          }),
        ),
      );
    }
    return phases;
  } finally {
    await serve.stop();
  }
}

/** The database's backends other than the asking one (the serve process's pools, while it runs). */
async function backendPids(database: ScenarioDatabase): Promise<number[]> {
  const rows = await database.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return rows.map((r) => r.pid);
}
