/**
 * The HTTP surface of `serve` when its database is stopped, frozen or never answers, and under a
 * burst of requests: on a private PostgreSQL this file starts, stops and freezes itself.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { SURFACE_REUSE_MS } from '../../src/app/http-routes.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { freePort } from '../helpers/free-port.js';
import { fetchText, parseSamples, sampleSum } from '../helpers/http-surface.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

const RECORDS = 60;
/** Series read from the database: none may show while it cannot be read. */
const DATABASE_SERIES = [
  'ledger_indexer_records_stored',
  'ledger_indexer_rejected_records',
  'ledger_indexer_conflicts',
  'ledger_indexer_non_final_records',
  'ledger_indexer_non_final_due_records',
  'ledger_indexer_deferred_indexes',
  'ledger_indexer_stream_watermark_raw_id',
  'ledger_indexer_stream_complete',
];
/** A statement every read of the database's state runs once (`readSyncStatus`). */
const STATE_READ = 'unnest(array_append(r.stream_keys, r.stream_key))';

let server: PrivatePostgres;
let simulator: Simulator;
let serve: CliRun;
let base: string;

/** Starts `serve` on `databaseUrl` and waits until it listens. */
async function startServe(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ run: CliRun; base: string }> {
  const port = await freePort();
  const run = runCli(['serve', '--http-port', String(port)], {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'serve to listen',
    () => run.stdout().includes('listening on') || run.child.exitCode !== null,
  );
  assert.equal(run.child.exitCode, null, run.stderr());
  return { run, base: url };
}

/** A GET that gives up after 15 s, with how long it took. */
async function timed(url: string): Promise<{ status: number; body: string; json: unknown; ms: number }> {
  const started = Date.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(15_000) }).catch((error: unknown) => {
    throw new Error(`GET ${url}: no answer after ${Date.now() - started} ms (${String(error)})`);
  });
  const body = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json')
    ? JSON.parse(body)
    : undefined;
  return { status: response.status, body, json, ms: Date.now() - started };
}

/** /metrics, /ready and /status at once: each within 5 s, metrics without the database's series. */
async function assertAnswersWithoutDatabase(at: string): Promise<{ ready: unknown; status: unknown }> {
  // A read finished within the reuse window is answered again: past it, every path reads anew.
  await pastReuse();
  const [metrics, ready, status] = await Promise.all(
    ['/metrics', '/ready', '/status'].map((p) => timed(at + p)),
  );
  for (const [name, answer] of [
    ['/metrics', metrics],
    ['/ready', ready],
    ['/status', status],
  ] as const) {
    assert.ok(answer!.ms <= 5000, `${name} answered after ${answer!.ms} ms`);
  }
  assert.equal(metrics!.status, 200);
  const samples = parseSamples(metrics!.body);
  assert.equal(sampleSum(samples, 'ledger_indexer_database_up'), 0);
  for (const name of DATABASE_SERIES) {
    assert.equal(sampleSum(samples, name), undefined, `${name} shown while the database cannot be read`);
  }
  assert.equal(ready!.status, 503);
  assert.equal(status!.status, 503);
  return { ready: ready!.json, status: status!.json };
}

function pastReuse(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, SURFACE_REUSE_MS + 200));
}

async function waitForDatabaseUp(at: string): Promise<void> {
  await waitFor(
    '/metrics to read the database again',
    async () => {
      const samples = parseSamples((await fetchText(`${at}/metrics`)).body);
      return (
        sampleSum(samples, 'ledger_indexer_database_up') === 1 &&
        sampleSum(samples, 'ledger_indexer_records_stored') === RECORDS
      );
    },
    { timeoutMs: 30_000 },
  );
}

before(async () => {
  server = await startPrivatePostgres();
  const database = await openDatabase({ databaseUrl: server.url, maxConnections: 2 });
  try {
    await migrateDatabase(database);
    simulator = createSimulator({ records: RECORDS, seed: 24 });
    const { url } = await simulator.listen();
    const sync = await runCli(['sync'], {
      LEDGER_BASE_URL: url,
      DATABASE_URL: server.url,
      LEDGER_REQUESTS_PER_SECOND: '0',
      LOG_LEVEL: 'silent',
    }).done;
    assert.equal(sync.code, 0, sync.stderr);
    // Every statement of the sessions opened from now on (serve's) is logged, to count reads.
    await database.db.execute(sql`ALTER DATABASE postgres SET log_statement = 'all'`);
  } finally {
    await database.close();
  }
  ({ run: serve, base } = await startServe(server.url));
  await waitForDatabaseUp(base);
});

after(async () => {
  if (serve && serve.child.exitCode === null) {
    serve.child.kill('SIGTERM');
    await serve.done;
  }
  await simulator?.close();
  await server?.destroy();
});

describe('serve under a burst of requests', () => {
  it('reads the database once for 50 concurrent /status and 50 concurrent /metrics', async () => {
    await pastReuse();
    const logged = () => server.log().split(STATE_READ).length - 1;
    const before = logged();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => timed(`${base}${i % 2 === 0 ? '/status' : '/metrics'}`)),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
    const reads = logged() - before;
    // One per path; a burst straddling the end of the reuse could make one more each.
    assert.ok(reads >= 1 && reads <= 4, `${reads} reads of the database's state for 100 requests`);
  });
});

describe('serve with its database frozen, stopped, or never answering', () => {
  it('frozen: /metrics, /ready and /status answer within 5 s, /metrics with database_up 0 and no database series', async () => {
    server.freeze();
    try {
      await assertAnswersWithoutDatabase(base);
    } finally {
      server.thaw();
    }
    await waitForDatabaseUp(base);
  });

  it('stopped: the same, and /ready says it cannot connect', async () => {
    await server.stop('fast');
    try {
      const { ready } = await assertAnswersWithoutDatabase(base);
      assert.match(String((ready as { reason: string }).reason), /cannot connect/);
    } finally {
      await server.start();
    }
    await waitForDatabaseUp(base);
  });

  it('a server that accepts and never answers: within 5 s, "cannot connect", never "connection lost"', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const address = silent.address();
    assert.ok(address !== null && typeof address === 'object');
    const mute = await startServe(`postgres://postgres@127.0.0.1:${address.port}/postgres`);
    try {
      const { ready, status } = await assertAnswersWithoutDatabase(mute.base);
      const reason = String((ready as { reason: string }).reason);
      assert.match(reason, /cannot connect/);
      assert.doesNotMatch(reason, /connection lost/);
      assert.match(String((status as { error: string }).error), /cannot connect|no answer/);
    } finally {
      mute.run.child.kill('SIGTERM');
      await mute.run.done;
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});
