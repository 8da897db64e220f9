/**
 * The production shape for the chaos test, on servers of its own: a private PostgreSQL and Redis
 * (which the test restarts), the simulator, `worker` processes, and `sync` runs from a cron-like
 * loop, plus the probes that tell how far they got.
 */
import { sql } from 'drizzle-orm';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { createRedisConnection } from '../../src/queue/connection.js';
import { createLedgerQueues, type LedgerQueues } from '../../src/queue/queues.js';
import { registerSchedules } from '../../src/queue/schedules.js';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import {
  type PrivateRedis,
  spawnWorker,
  startPrivateRedis,
  uniquePrefix,
  type WorkerProcess,
} from '../helpers/redis.js';
import type { Rng } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

/** Everything the chaos test runs, and what it needs to look at it. */
export interface Cluster {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  sim: Simulator;
  /** The test's own connection to the private PostgreSQL (queries may fail while it is down). */
  database: Database;
  queues: LedgerQueues;
  /** Environment of the `worker` and `sync` processes. */
  env: Record<string, string>;
  /** Every worker started so far, killed ones included. */
  workers: WorkerProcess[];
  startWorker(): WorkerProcess;
  /** Runs `sync <args>` again and again, 2.5 s apart, as cron would; {@link Cluster.close} stops it. */
  startSyncCron(args: string[]): SyncCron;
  /** What the `schedule` command does: registers the periodic jobs (again, after Redis lost them). */
  schedule(): Promise<void>;
  /** The last lines of every log, for a failure message. */
  logs(): string;
  close(): Promise<void>;
}

/** Starts the servers and the simulator; no worker yet. */
export async function startCluster(simOptions: SimulatorOptions): Promise<Cluster> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
  };
  try {
    const pg = await startPrivatePostgres();
    closers.push(() => pg.destroy());
    const redis = await startPrivateRedis();
    closers.push(() => redis.stop());
    const sim = createSimulator(simOptions);
    closers.push(() => sim.close());
    const { url } = await sim.listen();
    const database = await openDatabase({ databaseUrl: pg.url, maxConnections: 2 });
    closers.push(() => database.close());
    const connection = createRedisConnection(redis.url, 'producer');
    connection.on('error', () => undefined);
    closers.push(async () => connection.disconnect());
    const queues = createLedgerQueues({ connection, prefix: uniquePrefix('chaos') });
    // Redis is down on purpose for a while: the producer's failed commands are expected.
    queues.sync.on('error', () => undefined);
    queues.backfill.on('error', () => undefined);
    queues.flows.on('error', () => undefined);
    closers.push(() => queues.close());
    const env = {
      DATABASE_URL: pg.url,
      REDIS_URL: redis.url,
      LEDGER_BASE_URL: url,
      LEDGER_REQUESTS_PER_SECOND: '0',
      LEDGER_RETRY_MIN_MS: '20',
      LEDGER_RETRY_MAX_MS: '300',
      LEDGER_REQUEST_TIMEOUT_MS: '2000',
    };
    const workers: WorkerProcess[] = [];
    closers.push(async () => {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exited));
    });
    return {
      pg,
      redis,
      sim,
      database,
      queues,
      env,
      workers,
      startWorker() {
        const worker = spawnWorker({
          env: { ...env, LOG_LEVEL: 'info' },
          args: workerArgs(queues.prefix),
        });
        workers.push(worker);
        return worker;
      },
      startSyncCron(args) {
        const cron = startSyncCron(args, env, 2500);
        closers.push(() => cron.stop({ kill: true }));
        return cron;
      },
      schedule: () => registerSchedules(queues, { everyMs: 1000, streams: [{}] }).then(() => undefined),
      logs: () =>
        [
          ...workers.map((w, i) => `--- worker ${i} (pid ${w.child.pid}):\n${w.log().slice(-3000)}`),
          `--- postgres:\n${pg.log().slice(-1500)}`,
        ].join('\n'),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function workerArgs(prefix: string): string[] {
  return [
    '--queue-prefix',
    prefix,
    '--concurrency',
    '3',
    '--pages-per-range',
    '8',
    '--lock-ms',
    '3000',
    '--lease-ms',
    '4000',
  ];
}

/** How one `sync` run ended. */
export interface SyncOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** `sync` run again and again, a pause between runs, as cron would; one run at a time. */
export interface SyncCron {
  outcomes: SyncOutcome[];
  /** SIGKILLs the run in progress (waiting for one to start); resolves once it is dead. */
  killRunning(): Promise<void>;
  /** Starts no new run; resolves when the current one has ended (at once with `kill`). */
  stop(options?: { kill?: boolean }): Promise<void>;
}

function startSyncCron(args: string[], env: Record<string, string>, pauseMs: number): SyncCron {
  const outcomes: SyncOutcome[] = [];
  let current: CliRun | null = null;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const run = runCli(['sync', ...args], { ...env, LOG_LEVEL: 'warn' });
      current = run;
      const { code, signal, stderr } = await run.done;
      current = null;
      outcomes.push({ code, signal, stderr });
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    outcomes,
    async killRunning() {
      const run = await waitFor('a sync run to be under way', () => current ?? undefined, {
        timeoutMs: 20_000,
      });
      run.child.kill('SIGKILL');
      await run.done;
    },
    async stop(options = {}) {
      stopped = true;
      if (options.kill) current?.child.kill('SIGKILL');
      await loop;
    },
  };
}

/** `undefined` while the database does not answer (restarting, or not migrated yet). */
async function tryQuery<T>(database: Database, query: ReturnType<typeof sql>): Promise<T[] | undefined> {
  try {
    return await queryRows<T>(database.db, query);
  } catch {
    return undefined;
  }
}

/** Stored records, or `undefined` while the database does not answer. */
export async function storedCount(database: Database): Promise<number | undefined> {
  const rows = await tryQuery<{ n: string }>(
    database,
    sql`SELECT count(*)::text AS n FROM ledger_transactions`,
  );
  return rows?.[0] === undefined ? undefined : Number(rows[0].n);
}

/** Where the global list stands: its latest parallel backfill's status and its watermark. */
export async function globalListState(
  database: Database,
): Promise<{ backfill: string | null; watermark: number | null } | undefined> {
  const rows = await tryQuery<{ backfill: string | null; watermark: string | null }>(
    database,
    sql`SELECT (SELECT status FROM backfill_runs WHERE stream_key = 'txs' ORDER BY created_at DESC LIMIT 1) AS backfill,
               (SELECT watermark::text FROM sync_streams WHERE key = 'txs') AS watermark`,
  );
  const row = rows?.[0];
  if (!row) return undefined;
  return { backfill: row.backfill, watermark: row.watermark === null ? null : Number(row.watermark) };
}

/**
 * Two accounts for `sync` to follow, picked by `rng`: ordinary ones, with a few records each.
 * The busiest (fee recipients, market makers) are left out, so that the sync stores only a small
 * share of the records and a page the workers lost would still show.
 */
export function pickAccounts(sim: Simulator, rng: Rng): string[] {
  const counts = new Map<string, number>();
  for (const record of sim.records()) {
    for (const account of new Set([record.from, record.to]))
      counts.set(account, (counts.get(account) ?? 0) + 1);
  }
  const ordinary = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(10)
    .filter(([, n]) => n >= 5)
    .map(([account]) => account);
  const first = rng.pick(ordinary);
  const second = rng.pick(ordinary.filter((account) => account !== first));
  return [first, second];
}

/**
 * What the database says about the records the mirror lacks, for a failure's report: the
 * backfill runs, the proven ranges around each missing rawId, and any rejected or conflicting
 * sighting of it. Empty when nothing is missing.
 */
export async function missingRecordsReport(database: Database, sim: Simulator): Promise<string> {
  const stored = await tryQuery<{ raw_id: string }>(
    database,
    sql`SELECT raw_id::text FROM ledger_transactions`,
  );
  if (!stored) return 'the database did not answer';
  const have = new Set(stored.map((r) => Number(r.raw_id)));
  const missing = [...sim.records()]
    .filter((r) => r.malformed === undefined && !have.has(r.rawId))
    .map((r) => r.rawId)
    .slice(0, 20);
  if (missing.length === 0) return '';
  const around = (table: string) =>
    tryQuery(
      database,
      sql`SELECT * FROM ${sql.raw(table)} WHERE raw_id = ANY(${`{${missing.join(',')}}`}::bigint[])`,
    );
  const sections = {
    missing,
    backfill_runs: await tryQuery(database, sql`SELECT * FROM backfill_runs ORDER BY created_at`),
    proven_ranges_near: await tryQuery(
      database,
      sql`SELECT * FROM backfill_proven_ranges
          WHERE hi >= ${Math.min(...missing) - 50} AND lo <= ${Math.max(...missing) + 50} ORDER BY lo`,
    ),
    rejected: await around('rejected_records'),
    conflicts: await around('ledger_tx_conflicts'),
    streams: await tryQuery(
      database,
      sql`SELECT key, watermark, walk, lease_owner, lease_fence FROM sync_streams`,
    ),
  };
  return JSON.stringify(sections, null, 1);
}
