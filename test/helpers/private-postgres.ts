/**
 * A private PostgreSQL server for tests that stop, crash and restart it (never the shared one):
 * `initdb` into a temporary folder and `pg_ctl` on a free port. PostgreSQL refuses to run as
 * root, so under root the server runs as the `postgres` user (`setpriv`), in a folder it owns.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);
const PG_LIB = '/usr/lib/postgresql';

/** How to stop: `fast` disconnects clients and shuts down cleanly; `immediate` is a crash (recovery at start). */
export type StopMode = 'fast' | 'immediate';

/** A running private server. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  url: string;
  port: number;
  /** Starts the stopped server; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server. Default `fast`. */
  stop(mode?: StopMode): Promise<void>;
  /** Stops, then starts again on the same port and data. */
  restart(mode?: StopMode): Promise<void>;
  /**
   * Freezes the server (SIGSTOP to the postmaster and every process it started): connections
   * stay open and new ones are accepted by the kernel, but nothing answers until {@link thaw}.
   */
  freeze(): void;
  /** Lets a frozen server run again (SIGCONT). */
  thaw(): void;
  /** The server's log so far, for failure messages. */
  log(): string;
  /** Stops the server at once and deletes its folder. */
  destroy(): Promise<void>;
}

/** The folder of `initdb`/`pg_ctl`: the newest `/usr/lib/postgresql/<version>/bin`, else `pg_config --bindir`. */
export function postgresBinDir(): string {
  const versions = existsSync(PG_LIB)
    ? readdirSync(PG_LIB)
        .filter((v) => existsSync(join(PG_LIB, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] !== undefined) return join(PG_LIB, versions[0], 'bin');
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // No pg_config either: reported below.
  }
  throw new Error(
    `PostgreSQL server binaries not found (initdb under ${PG_LIB}/<version>/bin): install the postgresql package`,
  );
}

/** Under root: the command prefix that runs a program as `postgres`, and that user's ids. */
function asPostgres(): { prefix: string[]; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => {
    try {
      return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    } catch {
      throw new Error(
        'running as root, PostgreSQL needs the postgres user (installed with the postgresql package)',
      );
    }
  };
  const uid = id('-u');
  const gid = id('-g');
  return {
    prefix: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'],
    uid,
    gid,
  };
}

/**
 * Creates a fresh cluster in a temporary folder and starts it on a free port. `settings`: more
 * server settings (`name=value`), e.g. `wal_writer_delay=10s` so that an asynchronous commit
 * stays off the disk long enough for a crash to take it back.
 */
export async function startPrivatePostgres(options: { settings?: string[] } = {}): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const user = asPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'ledger-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  const command = (program: string, args: string[]): [string, string[]] => {
    const full = [join(bin, program), ...args];
    return user ? [user.prefix[0]!, [...user.prefix.slice(1), ...full]] : [full[0]!, full.slice(1)];
  };
  const pgCtl = async (args: string[]): Promise<void> => {
    const [file, argv] = command('pg_ctl', ['-D', data, ...args]);
    try {
      await run(file, argv, { timeout: 90_000 });
    } catch (error) {
      throw new Error(`pg_ctl ${args[0]} failed: ${String(error)}\n${readLog().slice(-2000)}`);
    }
  };
  const readLog = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  let running = false;

  // Durability off: the test crashes the server, never the machine, and WAL replay still happens.
  const settings = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories='${dir}'`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c shared_buffers=32MB',
    '-c max_connections=100',
    ...(options.settings ?? []).map((setting) => `-c ${setting}`),
  ].join(' ');
  const start = async (): Promise<void> => {
    await pgCtl(['start', '-w', '-t', '60', '-l', logFile, '-o', settings]);
    running = true;
  };
  const stop = async (mode: StopMode = 'fast'): Promise<void> => {
    if (!running) return;
    await pgCtl(['stop', '-w', '-t', '60', '-m', mode]);
    running = false;
  };
  // A test process that dies without its `after` hook must not leave a server behind.
  const stopAtExit = (): void => {
    if (!running) return;
    const [file, argv] = command('pg_ctl', ['-D', data, 'stop', '-m', 'immediate']);
    try {
      execFileSync(file, argv, { stdio: 'ignore', timeout: 30_000 });
    } catch {
      // Already gone.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopAtExit);

  const [initdb, initArgs] = command('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  try {
    await run(initdb, initArgs, { timeout: 120_000 });
    await start();
  } catch (error) {
    process.removeListener('exit', stopAtExit);
    stopAtExit();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let frozen: number[] = [];
  const thaw = (): void => {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone meanwhile.
      }
    }
    frozen = [];
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    freeze() {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const pids = [postmaster, ...childrenOf(postmaster)];
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      frozen.push(...pids);
    },
    thaw,
    port,
    start,
    stop,
    async restart(mode = 'fast') {
      await stop(mode);
      await start();
    },
    log: readLog,
    async destroy() {
      thaw();
      process.removeListener('exit', stopAtExit);
      await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(join('/proc', entry, 'stat'), 'utf8');
      // The command name, in parentheses, may hold spaces: the fields after it are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return children;
}
