/** `ledger-indexer sync` run once with a time limit, or again and again on an interval. */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import type { IndexerSetup } from './indexer-sync.js';
import { lastLine, logFileOf } from './indexer-sync.js';

/** A running `sync`. */
export interface SyncRun {
  /** Resolves when it exits 0; rejects on another exit, or when it outlived its time limit (then killed). */
  done: Promise<void>;
  /** Sends `signal` if it is still running. */
  signal(signal: NodeJS.Signals): void;
}

/** Starts `ledger-indexer sync` with `env`; killed with SIGKILL after `timeoutMs`. */
export function startSync(
  setup: IndexerSetup,
  env: Record<string, string | undefined>,
  timeoutMs: number,
): SyncRun {
  const child = spawn(process.execPath, [...setup.nodeFlags, ...setup.runner.nodeArgs(['sync'])], {
    cwd: setup.root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const logFile = logFileOf(setup, 'sync-loop');
  child.stderr?.on('data', (chunk: Buffer) => {
    if (logFile) appendFileSync(logFile, chunk);
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else if (timedOut) reject(new Error(`sync did not finish within ${timeoutMs} ms`));
      else reject(new Error(`sync exited with ${code ?? signal}: ${lastLine(stderr)}`));
    });
  });
  return {
    done,
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** `sync` again and again, one at a time. */
export interface SyncLoop {
  /** Runs that exited 0 so far. */
  runs(): number;
  /** Why the loop ended early (a run failed), or null. */
  failure(): string | null;
  /** Ends the loop: a run under way gets `graceMs` to finish, then SIGTERM, then SIGKILL. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `sync` every `everyMs` (at once when the previous run took longer), each limited to
 * `timeoutMs`. The first failed run ends the loop; `failure()` tells why. Never rejects.
 */
export function startSyncLoop(
  setup: IndexerSetup,
  env: Record<string, string | undefined>,
  input: { everyMs: number; timeoutMs: number },
): SyncLoop {
  let stopped = false;
  let runs = 0;
  let failure: string | null = null;
  let current: SyncRun | null = null;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      current = startSync(setup, env, input.timeoutMs);
      try {
        await current.done;
        runs++;
      } catch (error) {
        if (!stopped) failure = error instanceof Error ? error.message : String(error);
        return;
      } finally {
        current = null;
      }
      const rest = input.everyMs - (Date.now() - started);
      if (rest > 0 && !stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, rest);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    }
  })();
  return {
    runs: () => runs,
    failure: () => failure,
    async stop(graceMs = 10_000) {
      stopped = true;
      (wake as (() => void) | null)?.();
      const running = current as SyncRun | null;
      const timers = running
        ? [
            setTimeout(() => running.signal('SIGTERM'), graceMs),
            setTimeout(() => running.signal('SIGKILL'), graceMs + 10_000),
          ]
        : [];
      await loop;
      for (const timer of timers) clearTimeout(timer);
    },
  };
}
