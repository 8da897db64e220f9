/**
 * Running the real command line in a child process, for the sync tests that kill or signal it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { packageRoot } from '../../src/paths.js';
import { SOURCE_ENTRY } from '../helpers/source-entry.js';

export interface CliRun {
  child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) and everything printed. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  stderr(): string;
  /** What it printed on stdout so far. */
  stdout(): string;
}

/**
 * Spawns `node <entry> <args>` (the sources through tsx unless `entry` says otherwise) with
 * `env` on top of a clean environment.
 */
export function runCli(args: string[], env: Record<string, string>, entry: string[] = SOURCE_ENTRY): CliRun {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('LEDGER_') && key !== 'DATABASE_URL' && key !== 'LOG_LEVEL') {
      base[key] = value;
    }
  }
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: packageRoot,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
