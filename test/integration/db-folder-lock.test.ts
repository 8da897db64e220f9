import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/connect.js';
import { FOLDER_LOCK_FILE, lockDataFolder, parseLock } from '../../src/db/folder-lock.js';
import { processIdentity } from '../../src/db/process-liveness.js';
import { DataFolderBusyError } from '../../src/errors.js';

let root: string;
let dir: string;
let count = 0;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'ledger-indexer-folder-lock-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A new empty data folder for each test. */
async function freshDir(): Promise<string> {
  dir = join(root, `d${count++}`);
  await mkdir(dir);
  return dir;
}

const lockPath = () => join(dir, FOLDER_LOCK_FILE);

/** Writes a lock file naming `holder`, as another process would have. */
async function writeLock(holder: Record<string, unknown>): Promise<void> {
  await writeFile(
    lockPath(),
    JSON.stringify({ command: 'ledger-indexer sync', since: '2026-11-27T00:00:00.000Z', ...holder }),
  );
}

/** A node process that runs until killed. */
async function sleeper(): Promise<{ pid: number; kill(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  return {
    pid: child.pid!,
    async kill() {
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

/** The pid of a process that has ended (and been collected). */
async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

async function assertMine(): Promise<void> {
  const holder = parseLock(await readFile(lockPath(), 'utf8'));
  assert.equal(holder?.pid, process.pid, 'the lock file names this process');
}

const busy = (pid: number) => (error: unknown) =>
  error instanceof DataFolderBusyError &&
  error.holder.pid === pid &&
  new RegExp(`is open in another process, .*pid ${pid}`).test(error.message);

describe('the embedded database folder lock', () => {
  afterEach(async () => {
    await rm(lockPath(), { force: true });
  });

  it('lets one holder in at a time, and the next in once it lets go', async () => {
    await freshDir();
    const first = await lockDataFolder(dir, { command: 'ledger-indexer sync' });
    await assertMine();
    await assert.rejects(lockDataFolder(dir), busy(process.pid));
    await first.release();
    await assert.rejects(stat(lockPath()), { code: 'ENOENT' }, 'released: the file is gone');
    const second = await lockDataFolder(dir);
    await assertMine();
    await second.release();
  });

  it('refuses a live holder on this host and names it, then takes over once it is killed', async () => {
    await freshDir();
    const other = await sleeper();
    try {
      await writeLock({ pid: other.pid, host: hostname(), identity: processIdentity(other.pid) ?? null });
      await assert.rejects(lockDataFolder(dir), (error: unknown) => {
        assert.ok(busy(other.pid)(error), String(error));
        assert.match(
          (error as Error).message,
          /ledger-indexer sync \(pid \d+, since 2026-11-27T00:00:00.000Z\)/,
        );
        assert.match((error as Error).message, /wait for it to end, or set DATABASE_URL/);
        return true;
      });
    } finally {
      await other.kill();
    }
    const lock = await lockDataFolder(dir);
    await assertMine();
    await lock.release();
  });

  it('takes over at once from a holder that ended', async () => {
    await freshDir();
    await writeLock({ pid: await endedPid(), host: hostname(), identity: null });
    const started = Date.now();
    const lock = await lockDataFolder(dir);
    assert.ok(Date.now() - started < 1_000, 'no wait for a holder known to have ended');
    await assertMine();
    await lock.release();
  });

  it('takes over from a pid the system has given to another process', {
    skip: processIdentity(process.pid) === undefined ? 'no /proc here' : false,
  }, async () => {
    await freshDir();
    const other = await sleeper();
    try {
      await writeLock({ pid: other.pid, host: hostname(), identity: 'another-boot:1' });
      const lock = await lockDataFolder(dir);
      await assertMine();
      await lock.release();
    } finally {
      await other.kill();
    }
  });

  it('never judges a holder on another host: refuses, naming the file to delete', async () => {
    await freshDir();
    await writeLock({ pid: 1, host: `not-${hostname()}`, identity: null });
    await assert.rejects(lockDataFolder(dir), (error: unknown) => {
      assert.ok(error instanceof DataFolderBusyError);
      assert.ok(error.message.includes(`if it no longer runs, delete ${lockPath()}`), error.message);
      return true;
    });
  });

  it('waits for a lock file being written, and takes over one left unwritten', async () => {
    await freshDir();
    // Being written: readable and sound a moment later.
    await writeFile(lockPath(), '');
    const other = await sleeper();
    try {
      setTimeout(() => {
        void writeLock({ pid: other.pid, host: hostname(), identity: processIdentity(other.pid) ?? null });
      }, 300);
      await assert.rejects(lockDataFolder(dir), busy(other.pid));
    } finally {
      await other.kill();
    }
    // Left empty by a process killed between creating and writing it, a while ago.
    await writeFile(lockPath(), '');
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath(), old, old);
    const started = Date.now();
    const lock = await lockDataFolder(dir);
    assert.ok(Date.now() - started < 1_000, 'no wait for a file that stayed unwritten');
    await assertMine();
    await lock.release();
  });

  it('is held by an open embedded database until it closes', async () => {
    await freshDir();
    const database = await openDatabase({ dataDir: dir });
    try {
      await assertMine();
      await assert.rejects(openDatabase({ dataDir: dir, readOnly: true }), busy(process.pid));
    } finally {
      await database.close();
    }
    await assert.rejects(stat(lockPath()), { code: 'ENOENT' });
    const again = await openDatabase({ dataDir: dir });
    await again.close();
  });
});
