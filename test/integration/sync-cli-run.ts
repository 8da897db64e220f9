/**
 * Running the real command line in a child process, for the sync tests that kill or signal it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { packageRoot } from '../../src/paths.js';
import { COMMAND_ENTRY } from '../helpers/command-entry.js';

export interface CliRun {
  child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) and everything printed. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  stderr(): string;
  /** What it printed on stdout so far. */
  stdout(): string;
}

/**
 * Spawns `node <entry> <args>` (the bundled command unless `entry` says otherwise) with
 * `env` on top of a clean environment.
 */
export function runCli(args: string[], env: Record<string, string>, entry: string[] = COMMAND_ENTRY): CliRun {
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: packageRoot,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watch(child);
}

/** A command run whose process, once it ends, stays a zombie until `close()`: its parent never collects it. */
export interface UncollectedCliRun {
  /** The command's own pid (not its parent's). */
  pid: Promise<number>;
  /** Ends the parent, and with it the zombie. */
  close(): void;
}

/**
 * Spawns the command under a parent that never collects it (`sh` starting it in the background,
 * then becoming `sleep`), as a busy supervisor or a container's first process may: killed, the
 * command's pid stays there as a zombie.
 */
export function runCliUncollected(args: string[], env: Record<string, string>): UncollectedCliRun {
  const parent = spawn(
    'sh',
    [
      '-c',
      '"$0" "$@" >/dev/null 2>&1 & echo $!; exec sleep 600',
      process.execPath,
      ...COMMAND_ENTRY,
      ...args,
    ],
    {
      cwd: packageRoot,
      env: cliEnv(env),
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const pid = new Promise<number>((resolve, reject) => {
    parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    parent.once('error', reject);
  });
  return { pid, close: () => parent.kill('SIGKILL') };
}

/** `env` on top of this process's environment without the settings of ledger-indexer. */
function cliEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('LEDGER_') && key !== 'DATABASE_URL' && key !== 'LOG_LEVEL') {
      base[key] = value;
    }
  }
  return { ...base, ...env };
}

function watch(child: ChildProcess): CliRun {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr, stdout: () => stdout };
}

/** The global list's checkpoint: the next page its walk fetches, `null` when no walk is under way. */
export async function readNextPage(database: Pick<Database, 'db'>): Promise<number | null> {
  const rows = await queryRows<{ next_page: string | null }>(
    database.db,
    sql`SELECT (walk->>'nextPage') AS next_page FROM sync_streams WHERE key = 'txs'`,
  );
  const value = rows[0]?.next_page;
  return value === undefined || value === null ? null : Number(value);
}
