import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

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

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

/** A private Redis server, for tests that stop and restart it (never the shared one). */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
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
export function spawnWorker(input: { env: Record<string, string>; args?: string[] }): WorkerProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/bin.ts', 'worker', ...(input.args ?? [])],
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

/** Polls `probe` until it returns a value other than `undefined`/`false`, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  options: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 200));
  }
}
