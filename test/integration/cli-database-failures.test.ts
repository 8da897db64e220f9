import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait-for.js';
import { readNextPage, runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

let simulator: Simulator;
let serviceUrl: string;

before(async () => {
  // Page numbers: the run is stopped between page commits, their checkpoints read back.
  simulator = createSimulator({ records: 3000, seed: 43, paging: 'page', faults: { latencyMs: 20 } });
  ({ url: serviceUrl } = await simulator.listen());
});

after(async () => {
  await simulator.close();
});

function cliEnv(databaseUrl: string): Record<string, string> {
  return {
    LEDGER_BASE_URL: serviceUrl,
    DATABASE_URL: databaseUrl,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '2',
    // Every log line the run can write, to check none of them carries SQL or record values.
    LOG_LEVEL: 'debug',
  };
}

function databaseName(url: string): string {
  return new URL(url).pathname.slice(1);
}

/** The lines a person reads on stderr: neither JSON logs nor the progress lines of a walk. */
function humanLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter(
      (line) => line.trim() !== '' && !line.startsWith('{') && !/^txs (backfill|tail) page /.test(line),
    );
}

/** What of the statements or the records' values shows in `output`. */
function leaks(output: string): string[] {
  const found: string[] = [];
  for (const pattern of [/Failed query/i, /params:/i, /INSERT INTO/i, /CREATE SCHEMA/i, /ON CONFLICT/i]) {
    if (pattern.test(output)) found.push(String(pattern));
  }
  // Ledger hashes and signatures; then the records' long amounts (plain digit strings).
  const hex = /0x[0-9a-fA-F]{64,}/.exec(output);
  if (hex) found.push(hex[0]);
  for (const record of simulator.records()) {
    if (record.amount.length >= 15 && output.includes(record.amount)) found.push(record.amount);
    if (found.length > 5) break;
  }
  return found;
}

/** The JSON log lines of `stderr` that log an `err`. */
function loggedErrors(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { err?: Record<string, unknown> })
    .flatMap((entry) => (entry.err ? [entry.err] : []));
}

describe('a read-only database', () => {
  let testDb: TestDatabase;

  before(async () => {
    testDb = await createTestDatabase();
    const admin = new pg.Client({ connectionString: testDb.url });
    await admin.connect();
    try {
      await admin.query(
        `ALTER DATABASE "${databaseName(testDb.url)}" SET default_transaction_read_only = on`,
      );
    } finally {
      await admin.end();
    }
  });

  after(async () => {
    await testDb.drop();
  });

  for (const command of ['sync', 'migrate']) {
    it(`${command} exits 1 with one line saying the database is read-only, without SQL or values`, async () => {
      const { code, stdout, stderr } = await runCli([command], cliEnv(testDb.url)).done;
      assert.equal(code, 1, stderr);
      const lines = humanLines(stderr);
      assert.equal(lines.length, 1, stderr.slice(0, 2000));
      assert.match(
        lines[0]!,
        new RegExp(`^ledger-indexer ${command}: .*database is read-only \\(SQLSTATE 25006`),
      );
      assert.ok(lines[0]!.length < 300, lines[0]);
      assert.deepEqual(leaks(stdout + stderr), []);
      for (const err of loggedErrors(stderr)) {
        assert.equal(err['sqlstate'], '25006');
        assert.equal(err['operation'], 'migrate');
      }
    });
  }
});

describe('the connection lost in the middle of a sync', () => {
  let testDb: TestDatabase;

  before(async () => {
    testDb = await createTestDatabase();
  });

  after(async () => {
    await testDb.drop();
  });

  it('exits 1 with one line, keeps the checkpoint, and the next sync completes the mirror', async () => {
    const name = databaseName(testDb.url);
    // One writer: the first backfill is the walk, whose checkpoint is kept.
    const run = runCli(['sync'], { ...cliEnv(testDb.url), LEDGER_WRITERS: '1' });
    await waitFor(
      'the walk to commit a few pages',
      async () => ((await readNextPage(testDb.database)) ?? 0) >= 3,
    );
    // Holding the checkpoints' table makes the next page write wait in the server: a statement
    // is certainly in flight when its connection is cut.
    const locker = new pg.Client({ connectionString: testDb.url });
    await locker.connect();
    let cutAt = 0;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE sync_streams IN ACCESS EXCLUSIVE MODE');
      await waitFor('a page write waiting on the lock', async () => {
        const waiting = await locker.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
          [name],
        );
        return (waiting.rowCount ?? 0) > 0;
      });
      await locker.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
      cutAt = Date.now();
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }

    const failed = await run.done;
    assert.ok(Date.now() - cutAt < 30_000, `exited ${Date.now() - cutAt} ms after the connection was cut`);
    assert.equal(failed.code, 1, failed.stderr.slice(-2000));
    const lines = humanLines(failed.stderr);
    assert.equal(lines.length, 1, lines.join('\n').slice(0, 2000));
    assert.match(
      lines[0]!,
      /^ledger-indexer sync: the database failed: connection lost.*\(SQLSTATE 57P01 in page-write\); checkpoints kept, the next run resumes$/,
    );
    assert.deepEqual(leaks(failed.stdout + failed.stderr), []);
    const logged = loggedErrors(failed.stderr).filter((err) => err['type'] === 'DatabaseError');
    assert.ok(
      logged.some((err) => err['sqlstate'] === '57P01' && err['operation'] === 'page-write'),
      JSON.stringify(logged),
    );
    const checkpoint = await readNextPage(testDb.database);
    assert.ok(checkpoint !== null && checkpoint >= 3, `checkpoint kept at page ${checkpoint}`);

    const rerun = await runCli(['sync'], { ...cliEnv(testDb.url), LOG_LEVEL: 'warn' }).done;
    assert.equal(rerun.code, 0, rerun.stderr);
    await assertMirrorsTruth(testDb.database.db, simulator);
  });
});

describe('a server that does not accept TLS, which DATABASE_URL asks for', () => {
  let server: Server;
  let port: number;

  before(async () => {
    // Answers a client's SSLRequest with 'N', as PostgreSQL without TLS does, then hangs up.
    server = createServer((socket) => {
      socket.once('data', () => socket.end('N'));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  for (const command of ['sync', 'status']) {
    it(`${command} exits 1 with one line naming TLS, without the driver's warning`, async () => {
      const url = `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=require`;
      const { code, stderr } = await runCli([command], { ...cliEnv(url), LOG_LEVEL: 'silent' }).done;
      assert.equal(code, 1, stderr);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(lines[0]!, /the server does not accept TLS, which DATABASE_URL asks for \(its sslmode\)/);
      assert.doesNotMatch(stderr, /SECURITY WARNING/);
      // A setting to change: no run resumes past it, and status keeps no checkpoints to speak of.
      if (command === 'sync') assert.match(lines[0]!, /the next run fails the same way until this is fixed/);
      else assert.doesNotMatch(lines[0]!, /checkpoints/);
    });
  }
});
