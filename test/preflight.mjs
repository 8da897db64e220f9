// What a test run needs from the machine, checked before any test starts: the integration tests
// need PostgreSQL and Redis answering (at DATABASE_URL and REDIS_URL, as the tests read them),
// PostgreSQL's and Redis's server programs (for the tests that start, crash and restart servers
// of their own), the tests of the feed's NATS destination NATS with JetStream (at NATS_URL) and,
// for those that kill a server of their own, nats-server; and the browser tests Chromium. A run missing any of them stops with one line
// naming what is missing and how to get it, instead of a pile of connection errors and cancelled
// tests. Unit tests need nothing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';

/** Where the browser tests find Chromium (Debian's build, driven by playwright-core). */
export const CHROMIUM = '/usr/bin/chromium';
/** The addresses the tests use when DATABASE_URL and REDIS_URL are unset. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

const PG_LIB = '/usr/lib/postgresql';
const HOW = '`bash .ci/run` (as root) installs and starts what the tests need, then runs them';

/**
 * What the test files (paths relative to `root`) need: a server that must answer
 * (`{ kind: 'server', what, host, port, socket?, setting }`), a program or file that must exist
 * (`{ kind: 'program', what, found, hint }`).
 */
export function testNeeds(files, { root, env = process.env }) {
  const needs = [];
  if (files.some((file) => file.startsWith('test/integration/'))) {
    needs.push(postgresServer(env.DATABASE_URL ?? DEFAULT_DATABASE_URL));
    needs.push(redisServer(env.REDIS_URL ?? DEFAULT_REDIS_URL));
    needs.push({
      kind: 'program',
      what: "PostgreSQL's server programs",
      found: hasPostgresPrograms,
      hint: `initdb under ${PG_LIB}/<version>/bin: apt-get install postgresql`,
    });
    needs.push({
      kind: 'program',
      what: 'redis-server',
      found: () => onPath('redis-server', env.PATH),
      hint: 'not on PATH: apt-get install redis-server',
    });
  }
  const sources = files.map((file) => readFileSync(join(root, file), 'utf8'));
  // Unit tests may name the NATS client's classes; only integration tests connect.
  const integration = sources.filter((_, i) => files[i].startsWith('test/integration/'));
  if (integration.some((source) => /from '(@nats-io\/|[./]*helpers\/nats\.js')/.test(source))) {
    needs.push(natsServer(env.NATS_URL ?? DEFAULT_NATS_URL));
  }
  if (integration.some((source) => /\bstartPrivateNats\(/.test(source))) {
    needs.push({
      kind: 'program',
      what: 'nats-server',
      found: () => existsSync('/usr/sbin/nats-server') || onPath('nats-server', env.PATH),
      hint: 'not on PATH: apt-get install nats-server',
    });
  }
  if (sources.some((source) => /from 'playwright-core'/.test(source))) {
    needs.push(chromiumNeed(CHROMIUM));
  }
  return needs;
}

/** The need of the browser tests: Chromium at `path`. */
export function chromiumNeed(path) {
  return {
    kind: 'program',
    what: 'Chromium',
    found: () => existsSync(path),
    hint: `not at ${path}: apt-get install chromium`,
  };
}

/**
 * PostgreSQL at `url` (a Unix socket folder in `?host=/…` too). It answers an SSLRequest with one
 * byte, `S` or `N`, before any credentials: proof enough that PostgreSQL listens there.
 */
export function postgresServer(url, setting = 'DATABASE_URL') {
  const hello = Buffer.alloc(8);
  hello.writeInt32BE(8, 0);
  hello.writeInt32BE(80877103, 4);
  const answers = (reply) => reply[0] === 0x53 || reply[0] === 0x4e;
  return server({ what: 'PostgreSQL', url, defaultPort: 5432, setting, hello, answers });
}

/** Redis at `url`: it answers an inline PING with `+PONG`, or with an error when it wants a password. */
export function redisServer(url, setting = 'REDIS_URL') {
  const answers = (reply) => reply[0] === 0x2b || reply[0] === 0x2d;
  return server({ what: 'Redis', url, defaultPort: 6379, setting, hello: Buffer.from('PING\r\n'), answers });
}

/**
 * NATS with JetStream at `url`: the server speaks first, an `INFO {…}` line that says whether
 * JetStream is enabled.
 */
export function natsServer(url, setting = 'NATS_URL') {
  const answers = (reply) => {
    const text = reply.toString('latin1');
    if (!text.startsWith('INFO ')) return false;
    return /"jetstream"\s*:\s*true/.test(text) ? true : 'it answers without JetStream (start it with -js)';
  };
  return server({ what: 'NATS', url, defaultPort: 4222, setting, hello: Buffer.alloc(0), answers });
}

function server({ what, url, defaultPort, setting, hello, answers }) {
  const need = { kind: 'server', what, setting, hello, answers };
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return { ...need, invalid: url };
  }
  const port = Number(parsed.port || defaultPort);
  const socketDir = parsed.searchParams.get('host');
  if (socketDir?.startsWith('/')) return { ...need, port, socket: join(socketDir, `.s.PGSQL.${port}`) };
  return { ...need, host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost', port };
}

/** Why `need` is not met, or null when it is. */
async function problem(need, timeoutMs) {
  if (need.kind === 'program') return need.found() ? null : `${need.what} is missing (${need.hint})`;
  if (need.invalid !== undefined) return `${need.setting} is not a valid URL`;
  const where = need.socket ?? `${need.host}:${need.port}`;
  const failure = await connectFailure(need, timeoutMs);
  return failure === null ? null : `${need.what} does not answer on ${where} (${need.setting}; ${failure})`;
}

/** Null when the server answers its hello within `timeoutMs` of connecting, else why not. */
function connectFailure(need, timeoutMs) {
  return new Promise((resolve) => {
    const socket = need.socket
      ? connect({ path: need.socket })
      : connect({ host: need.host, port: need.port });
    const done = (result) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once('connect', () => socket.write(need.hello));
    socket.once('data', (reply) => {
      const verdict = need.answers(reply);
      done(verdict === true ? null : typeof verdict === 'string' ? verdict : 'something else answers there');
    });
    socket.once('end', () => done('the connection was closed without an answer'));
    socket.once('error', (err) =>
      done(err.code === 'ECONNREFUSED' ? 'connection refused' : (err.code ?? err.message)),
    );
  });
}

/**
 * Checks every need at once (servers with a `timeoutMs` connect each) and returns the one line
 * to print when any is missing, or null when everything is there.
 */
export async function preflight(needs, { timeoutMs = 1000 } = {}) {
  const problems = (await Promise.all(needs.map((need) => problem(need, timeoutMs)))).filter(
    (p) => p !== null,
  );
  if (problems.length === 0) return null;
  return `tests not run: ${problems.join('; ')}. ${HOW}.`;
}

function hasPostgresPrograms() {
  if (existsSync(PG_LIB) && readdirSync(PG_LIB).some((v) => existsSync(join(PG_LIB, v, 'bin', 'initdb')))) {
    return true;
  }
  const bindir = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  return bindir.status === 0 && existsSync(join(bindir.stdout.trim(), 'initdb'));
}

function onPath(program, path = '') {
  return path.split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
