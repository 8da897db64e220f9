/**
 * The embedded database's folder lock. PGlite keeps no lock of its own: two processes that open
 * one folder each write its files from their own cache, and one loses the other's commits (two
 * overlapping `sync` runs, a checkpoint past records the table no longer holds). So a process
 * opens the folder only after creating `ledger-indexer.lock` in it, atomically, naming itself
 * (pid, host, and which process that pid is); it deletes the file when it closes the database.
 * A file left by a process that no longer runs (killed, power loss) is taken over at once: a
 * killed run never blocks the next.
 */
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { DataFolderBusyError, DataFolderError, type FolderHolder } from '../errors.js';
import { fileErrorCode } from './data-folder.js';
import { processIdentity, processRunning } from './process-liveness.js';

/** The lock's file name, inside the data folder (PostgreSQL ignores files it does not know there). */
export const FOLDER_LOCK_FILE = 'ledger-indexer.lock';

/**
 * How long a lock file may stay empty or unreadable before it counts as left behind: its creator
 * writes it right after creating it, so only a process killed in between leaves it so.
 */
const UNWRITTEN_GRACE_MS = 2_000;
/** How often an unwritten lock file is read again meanwhile. */
const UNWRITTEN_POLL_MS = 50;

/** What the lock file holds. */
interface LockContent extends FolderHolder {
  /** `processIdentity` of the holder where the system tells it: a reused pid is someone else. */
  identity: string | null;
}

/** A held folder lock. */
export interface FolderLock {
  /** Deletes the lock file if it still names this process. Never throws. */
  release(): Promise<void>;
}

/**
 * Takes the lock of the data folder `dataDir` (which must exist), taking over a lock whose holder
 * no longer runs. Throws {@link DataFolderBusyError} naming the holder when another process,
 * or this one, holds it.
 */
export async function lockDataFolder(
  dataDir: string,
  options: { command?: string } = {},
): Promise<FolderLock> {
  try {
    return await takeLock(dataDir, options.command ?? processCommand());
  } catch (error) {
    if (error instanceof DataFolderError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new DataFolderError({
      path: dataDir,
      message: `cannot lock the embedded database in ${dataDir} (${join(dataDir, FOLDER_LOCK_FILE)}): ${reason}`,
      code: fileErrorCode(error),
      cause: error,
    });
  }
}

async function takeLock(dataDir: string, command: string): Promise<FolderLock> {
  const file = join(dataDir, FOLDER_LOCK_FILE);
  const mine: LockContent = {
    pid: process.pid,
    host: hostname(),
    command,
    since: new Date().toISOString(),
    identity: processIdentity(process.pid) ?? null,
  };
  const text = `${JSON.stringify(mine)}\n`;
  for (;;) {
    if (await createExclusive(file, text)) return { release: () => releaseLock(file, text) };
    const found = await readLock(file);
    // Gone between the create and the read: try again.
    if (found === undefined) continue;
    const holder = parseLock(found);
    if (holder === null && (await lockAgeMs(file)) < UNWRITTEN_GRACE_MS) {
      // Its creator may be writing it right now.
      await new Promise((resolve) => setTimeout(resolve, UNWRITTEN_POLL_MS));
      continue;
    }
    if (holder !== null && holds(holder))
      throw new DataFolderBusyError(dataDir, holder, { local: holder.host === mine.host, lockFile: file });
    // Left behind: deleted only if it still says the same, so a lock just taken over by another
    // newcomer is not deleted in its place.
    if ((await readLock(file)) === found) await unlink(file).catch(ignoreMissing);
  }
}

/** Creates `file` with `text` unless it exists; false when it does. */
async function createExclusive(file: string, text: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'wx');
  } catch (error) {
    if (fileErrorCode(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  return true;
}

/** How long ago the lock file was last written; 0 when there is no such file. */
async function lockAgeMs(file: string): Promise<number> {
  try {
    return Date.now() - (await stat(file)).mtimeMs;
  } catch (error) {
    if (fileErrorCode(error) === 'ENOENT') return 0;
    throw error;
  }
}

/** The lock file's text; `undefined` when there is no such file. */
async function readLock(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (fileErrorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** The holder a lock file names; null for anything else (unwritten, cut short, not ours). */
export function parseLock(text: string): LockContent | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { pid, host, command, since, identity } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0 || typeof host !== 'string') return null;
  return {
    pid: pid as number,
    host,
    command: typeof command === 'string' ? command : 'a process',
    since: typeof since === 'string' ? since : 'an unknown time',
    identity: typeof identity === 'string' ? identity : null,
  };
}

/**
 * Whether the lock's holder still holds it: on another host that cannot be told from here, so it
 * does; on this one, while a process of its pid runs and, where the system tells, is the same one.
 * This very process holds it too: a second database over one folder in one process loses commits
 * as two processes do.
 */
function holds(holder: LockContent): boolean {
  if (holder.host !== hostname()) return true;
  if (!processRunning(holder.pid)) return false;
  const identity = processIdentity(holder.pid);
  return holder.identity === null || identity === undefined || identity === holder.identity;
}

async function releaseLock(file: string, text: string): Promise<void> {
  try {
    if ((await readLock(file)) === text) await unlink(file);
  } catch {
    // Left behind, it names a process that ended: the next one takes it over.
  }
}

function ignoreMissing(error: unknown): void {
  if (fileErrorCode(error) !== 'ENOENT') throw error;
}

/** This process's command for the lock (`ledger-indexer sync`): the script's name and its first word. */
function processCommand(): string {
  const script = basename(process.argv[1] ?? 'node').replace(/\.[cm]?[jt]s$/, '');
  const word = process.argv[2];
  const name = script === 'bin' || script === 'main' ? 'ledger-indexer' : script;
  return word === undefined || word.startsWith('-') ? name : `${name} ${word}`;
}
