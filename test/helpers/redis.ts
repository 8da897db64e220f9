import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { queryRows } from '../../src/db/rows.js';
import { createRedisConnection } from '../../src/queue/connection.js';
import { createLedgerQueues, type LedgerQueues } from '../../src/queue/queues.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { COMMAND_ENTRY } from './command-entry.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/** The shared Redis of the test run. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A BullMQ key prefix no other test file uses, so files can run in parallel on one Redis. */
export function uniquePrefix(file: string): string {
  return `test-${file}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under `prefix`. */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A private Redis server, for tests that stop and restart it (never the shared one). */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** Starts a private Redis on a free port; `args` go to `redis-server` (e.g. `['--requirepass', 'pw']`). */
export async function startPrivateRedis(options: { args?: string[] } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        ...(options.args ?? []),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let seen = '';
    const ready = new Promise<void>((resolve, reject) => {
      child?.stdout?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('Ready to accept connections')) resolve();
      });
      child?.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
    });
    await ready;
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    running.kill('SIGKILL');
    await once(running, 'exit');
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop };
}

/** A `ledger-indexer worker` process started for a test. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves once the worker takes jobs. */
  ready: Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote to stderr so far (its JSON log). */
  log(): string;
}

const repoRoot = new URL('../..', import.meta.url).pathname;

/** Starts `ledger-indexer worker` in its own process, the way production runs it. */
export function spawnWorker(input: {
  env: Record<string, string>;
  args?: string[];
  /** How node runs the command: the bundled command unless given. */
  entry?: string[];
}): WorkerProcess {
  const child = spawn(
    process.execPath,
    [...(input.entry ?? COMMAND_ENTRY), 'worker', ...(input.args ?? [])],
    {
      cwd: repoRoot,
      env: { ...process.env, LOG_LEVEL: 'info', ...input.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('"msg":"worker ready"')) resolve();
    });
    void exited.then(({ code }) =>
      reject(new Error(`worker exited with ${code} before it was ready:\n${log.slice(-2000)}`)),
    );
  });
  ready.catch(() => undefined);
  return { child, ready, exited, log: () => log };
}

// ---- The production shape for worker tests: database, simulator, queues and worker processes ----
/** One isolated production shape: its own database, queue prefix and simulator. */
export interface Setup {
  db: TestDatabase;
  sim: Simulator;
  url: string;
  prefix: string;
  redis: Redis;
  queues: LedgerQueues;
  workers: WorkerProcess[];
  start(args?: string[]): WorkerProcess;
  close(): Promise<void>;
}

export async function setUp(
  name: string,
  simOptions: Parameters<typeof createSimulator>[0],
  options: { redisUrl?: string; env?: Record<string, string>; entry?: string[] } = {},
): Promise<Setup> {
  const redisUrl = options.redisUrl ?? TEST_REDIS_URL;
  const db = await createTestDatabase();
  // The workers' suites were written for page numbers (parallel range jobs, their proofs): a
  // service that speaks only them, unless the test asks for the key dialect.
  const sim = createSimulator({ paging: 'page', ...simOptions });
  const { url } = await sim.listen();
  const prefix = uniquePrefix(name);
  const redis = createRedisConnection(redisUrl, 'producer');
  const queues = createLedgerQueues({ connection: redis, prefix });
  const workers: WorkerProcess[] = [];
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RETRY_MIN_MS: '20',
    LEDGER_RETRY_MAX_MS: '200',
    LEDGER_REQUEST_TIMEOUT_MS: '2000',
    ...options.env,
  };
  return {
    db,
    sim,
    url,
    prefix,
    redis,
    queues,
    workers,
    start(args = []) {
      const worker = spawnWorker({
        env,
        entry: options.entry,
        args: [
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
          ...args,
        ],
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exited));
      await queues.close();
      redis.disconnect();
      await deletePrefix(redisUrl, prefix).catch(() => undefined);
      await sim.close();
      await db.drop();
    },
  };
}

async function backfillStatus(db: TestDatabase): Promise<string | undefined> {
  const rows = await queryRows<{ status: string }>(
    db.database.db,
    sql`select status from backfill_runs order by created_at desc limit 1`,
  );
  return rows[0]?.status;
}

async function watermark(db: TestDatabase): Promise<number | null> {
  const rows = await queryRows<{ watermark: string | null }>(
    db.database.db,
    sql`select watermark::text as watermark from sync_streams where key = 'txs'`,
  );
  return rows[0]?.watermark == null ? null : Number(rows[0].watermark);
}

async function storedRawIds(db: TestDatabase): Promise<number[]> {
  const rows = await queryRows<{ raw_id: string }>(
    db.database.db,
    sql`select raw_id::text as raw_id from ledger_transactions order by raw_id`,
  );
  return rows.map((r) => Number(r.raw_id));
}

/** Backfills with the running workers, then stops arrivals and tails once: the table must equal the truth. */
export async function syncToTruth(setup: Setup, timeoutMs: number): Promise<void> {
  await setup.queues.add('sync-stream', { stream: {} }, { deduplicationId: 'start' });
  try {
    await waitFor(
      'the backfill to be proven complete',
      async () => (await backfillStatus(setup.db)) === 'done',
      { timeoutMs },
    );
  } catch (error) {
    for (const worker of setup.workers) process.stderr.write(worker.log().slice(-3000));
    throw error;
  }
  setup.sim.pauseArrivals();
  const head = setup.sim.headRawId();
  await waitFor(
    'the tail to reach the head',
    async () => {
      const mark = await watermark(setup.db);
      if (mark !== null && mark >= head) return true;
      await setup.queues.add('sync-stream', { stream: {} }, { deduplicationId: 'tail' });
      return false;
    },
    { timeoutMs: 20_000, everyMs: 500 },
  );
  const truth = [...setup.sim.records()].map((r) => r.rawId);
  const stored = await storedRawIds(setup.db);
  const have = new Set(stored);
  const known = new Set(truth);
  assert.deepEqual(
    { missing: truth.filter((id) => !have.has(id)), extra: stored.filter((id) => !known.has(id)) },
    { missing: [], extra: [] },
  );
}

export async function provenCount(db: TestDatabase): Promise<number> {
  const rows = await queryRows<{ n: string }>(
    db.database.db,
    sql`select count(*)::text as n from backfill_proven_ranges where stream_key = 'txs'`,
  );
  return Number(rows[0]?.n ?? 0);
}
