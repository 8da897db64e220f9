import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { freePort } from '../helpers/free-port.js';
import {
  chromiumNeed,
  natsServer,
  postgresServer,
  preflight,
  redisServer,
  testNeeds,
} from '../preflight.mjs';

const HOW = '`bash .ci/run` (as root) installs and starts what the tests need, then runs them.';

/** A loopback server that answers every connection's first bytes with `reply` (or speaks first, as NATS does). */
async function answering(
  reply: string,
  options: { first?: boolean } = {},
): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) =>
    options.first ? socket.end(reply) : socket.once('data', () => socket.end(reply)),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

describe('the test run stops at once when the machine lacks what the tests need', () => {
  const servers: Server[] = [];
  after(() => {
    for (const server of servers) server.close();
  });

  it('names a PostgreSQL that does not answer, and how to get it, in one line', async () => {
    const port = await freePort();
    const line = await preflight([postgresServer(`postgres://postgres@127.0.0.1:${port}/postgres`)]);
    assert.equal(
      line,
      `tests not run: PostgreSQL does not answer on 127.0.0.1:${port} (DATABASE_URL; connection refused). ${HOW}`,
    );
  });

  it('names everything missing in the same line: Redis, NATS and Chromium too', async () => {
    const [pg, redis, nats] = [await freePort(), await freePort(), await freePort()];
    const line = await preflight([
      postgresServer(`postgres://postgres@127.0.0.1:${pg}/postgres`),
      redisServer(`redis://127.0.0.1:${redis}`),
      natsServer(`nats://127.0.0.1:${nats}`),
      chromiumNeed('/nonexistent/chromium'),
    ]);
    assert.ok(line !== null);
    assert.doesNotMatch(line, /\n/);
    assert.match(line, new RegExp(`PostgreSQL does not answer on 127\\.0\\.0\\.1:${pg} \\(DATABASE_URL`));
    assert.match(line, new RegExp(`Redis does not answer on 127\\.0\\.0\\.1:${redis} \\(REDIS_URL`));
    assert.match(
      line,
      new RegExp(`NATS does not answer on 127\\.0\\.0\\.1:${nats} \\(NATS_URL; connection refused`),
    );
    assert.match(line, /Chromium is missing \(not at \/nonexistent\/chromium: apt-get install chromium\)/);
  });

  it('passes servers that answer as PostgreSQL and Redis do, and refuses one that says something else', async () => {
    const postgres = await answering('N');
    const redis = await answering('+PONG\r\n');
    const other = await answering('HTTP/1.1 400 Bad Request\r\n\r\n');
    servers.push(postgres.server, redis.server, other.server);
    const passing = [
      postgresServer(`postgres://postgres@127.0.0.1:${postgres.port}/postgres`),
      redisServer(`redis://127.0.0.1:${redis.port}`),
    ];
    assert.equal(await preflight(passing), null);
    const line = await preflight([redisServer(`redis://127.0.0.1:${other.port}`)]);
    assert.match(line ?? '', /Redis does not answer on .* something else answers there/);
  });

  it('passes a NATS whose INFO says JetStream, and names one without it', async () => {
    const info = (jetstream: boolean) =>
      `INFO {"server_id":"N1","version":"2.9.10","jetstream":${jetstream},"max_payload":1048576}\r\n`;
    const nats = await answering(info(true), { first: true });
    const plain = await answering(info(false), { first: true });
    servers.push(nats.server, plain.server);
    assert.equal(await preflight([natsServer(`nats://127.0.0.1:${nats.port}`)]), null);
    assert.match(
      (await preflight([natsServer(`nats://127.0.0.1:${plain.port}`)])) ?? '',
      new RegExp(
        `NATS does not answer on 127\\.0\\.0\\.1:${plain.port} \\(NATS_URL; it answers without JetStream`,
      ),
    );
  });

  it('asks nothing of the machine for unit tests, the servers for integration tests, Chromium for the browser test', () => {
    const env = {
      DATABASE_URL: 'postgres://u@db.example.org:5433/x',
      REDIS_URL: 'redis://cache.example.org',
    };
    assert.deepEqual(testNeeds(['test/unit/config.test.ts'], { root: packageRoot, env }), []);
    const integration = testNeeds(['test/integration/cli-sync.test.ts'], { root: packageRoot, env });
    assert.deepEqual(
      integration.map((need) =>
        need.kind === 'server' ? `${need.what} ${need.host}:${need.port}` : need.what,
      ),
      [
        'PostgreSQL db.example.org:5433',
        'Redis cache.example.org:6379',
        "PostgreSQL's server programs",
        'redis-server',
      ],
    );
    const browser = testNeeds(['test/integration/status-page-browser.test.ts'], { root: packageRoot, env });
    assert.ok(browser.some((need) => need.what === 'Chromium'));
    assert.ok(!integration.some((need) => need.what === 'NATS'), 'only the NATS tests need NATS');
    const nats = testNeeds(['test/integration/feed-nats-sink-failures.test.ts'], {
      root: packageRoot,
      env: { ...env, NATS_URL: 'nats://broker.example.org:4333' },
    });
    assert.ok(nats.some((need) => need.kind === 'server' && need.what === 'NATS' && need.port === 4333));
    assert.ok(nats.some((need) => need.what === 'nats-server'));
    assert.deepEqual(testNeeds(['test/unit/nats-sink.test.ts'], { root: packageRoot, env }), []);
  });

  it('node test/run.mjs prints that one line and runs no test', async () => {
    const port = await freePort();
    const run = spawnSync(process.execPath, ['test/run.mjs', 'test/integration/simulator-api.test.ts'], {
      cwd: packageRoot,
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` },
    });
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    const lines = run.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(
      lines[0] ?? '',
      new RegExp(`^tests not run: .*PostgreSQL does not answer on 127\\.0\\.0\\.1:${port}`),
    );
    assert.ok(lines[0]?.endsWith(HOW), lines[0]);
  });
});
