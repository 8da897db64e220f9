/**
 * `ledger-indexer serve` started as its user starts it: a process of its own over the mirror, on
 * 127.0.0.1 at a free port, its memory followed from /proc.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { ScenarioDatabase } from './databases.js';
import type { IndexerSetup } from './indexer-sync.js';
import { logFileOf } from './indexer-sync.js';
import { type ProcessResult, spawnMeasured } from './processes.js';

/** A running `serve`. */
export interface ServeProcess {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  pid: number;
  /** Resident memory now (`VmRSS`), bytes; null once gone. */
  rssBytes(): number | null;
  /** Peak resident memory since it started (`VmHWM`), bytes; null once gone. */
  peakRssBytes(): number | null;
  /** SIGTERM, then its exit (peak memory and CPU time as the bench's preload reports them). */
  stop(): Promise<ProcessResult>;
}

/** Starts `serve` over `database` and waits for it to listen and to have stamped the feed's backlog. */
export async function startServe(
  setup: IndexerSetup,
  input: { database: ScenarioDatabase; label: string },
): Promise<ServeProcess> {
  if (!setup.runner.hasCommand('serve')) throw new Error('the serve command has not landed');
  const port = await freePort();
  const child = spawnMeasured({
    nodeArgs: [...setup.nodeFlags, ...setup.runner.nodeArgs(['serve', '--http-port', String(port)])],
    env: {
      ...setup.env,
      DATABASE_URL: input.database.url,
      LEDGER_HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: setup.logDir === null ? 'warn' : 'debug',
      NODE_ENV: 'production',
    },
    cwd: setup.root,
    label: input.label,
    logFile: logFileOf(setup, input.label),
  });
  const stop = async (): Promise<ProcessResult> => {
    if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGTERM');
    const timer = setTimeout(() => child.child.kill('SIGKILL'), 10_000);
    try {
      return await child.exited;
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    const match = await child.waitForStdout(/listening on (http:\/\/\S+?)\/?\s/, 60_000);
    await waitUntilStamped(input.database, 120_000);
    return {
      origin: match[1]!,
      pid: child.pid,
      rssBytes: () => statusBytes(child.pid, 'VmRSS'),
      peakRssBytes: () => statusBytes(child.pid, 'VmHWM'),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Waits until the feed holds no unstamped transaction: a mirror written by `sync` alone (no feed
 * server running) is stamped by the first `serve`, which must not fall inside a measurement.
 */
async function waitUntilStamped(database: ScenarioDatabase, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await database.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM ledger_feed_transactions WHERE last_position IS NULL',
    );
    if ((row?.n ?? 0) === 0) return;
    if (Date.now() > deadline) throw new Error(`serve left ${row?.n} feed transactions unstamped`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A port free on 127.0.0.1 now (`serve` takes no port 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
