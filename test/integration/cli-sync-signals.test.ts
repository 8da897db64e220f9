/**
 * `sync` stopped by a signal while the service hangs mid-walk: the requests in flight are
 * abandoned a moment later, so the command exits with 130/143 within seconds instead of waiting
 * out timeouts and retries; a second signal exits at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listStreams, recentRuns } from '../../src/db/queries/stream-queries.js';
import { createSimulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

/** From the signal to the exit; well under the timeouts and retries the requests would wait out. */
const SIGNAL_BOUND_MS = 9_000;

let server: TestHttpServer;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  // The service answers /info, then never answers a page: the sync hangs in the middle of its walk.
  const simulator = createSimulator({ records: 50, seed: 7 });
  const { url } = await simulator.listen();
  const info: unknown = await (await fetch(`${url}/info`)).json();
  await simulator.close();
  server = await startHttpServer((request) => (request.path === '/info' ? { body: info } : { hang: true }));
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: server.baseUrl,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    // Page numbers, as the service is told to speak: the hang comes in the walk, not in asking.
    LEDGER_PAGING: 'page',
    // What a user has by default: requests that would wait 30 s, then be retried.
    LEDGER_REQUEST_TIMEOUT_MS: '30000',
    LOG_LEVEL: 'silent',
  };
});

after(async () => {
  await server.close();
  await testDb.drop();
});

/** Starts `sync` and waits until its walk's first page request hangs at the server. */
async function hangingSync(): Promise<CliRun> {
  const before = server.requests.length;
  const run = runCli(['sync'], env);
  await waitFor(
    'a page request to reach the server',
    () => server.requests.slice(before).some((request) => request.path === '/txs'),
    { timeoutMs: 40_000 },
  );
  return run;
}

async function exitWithin(run: CliRun, ms: number): Promise<Awaited<CliRun['done']>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`sync still running ${ms} ms after the signal:\n${run.stderr().slice(-1500)}`));
    }, ms);
  });
  try {
    return await Promise.race([run.done, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('sync stopped while the service hangs', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`${signal} abandons the hanging requests and exits ${code} with one line`, async () => {
      const run = await hangingSync();
      run.child.kill(signal);
      const exit = await exitWithin(run, SIGNAL_BOUND_MS);
      assert.equal(exit.code, code, exit.stderr);
      const lines = exit.stderr.trim().split('\n');
      assert.equal(lines.length, 1, exit.stderr);
      assert.match(
        lines[0]!,
        new RegExp(
          `^ledger-indexer sync: stopped by ${signal}, requests in flight abandoned; checkpoints kept`,
        ),
      );
      // A stop the operator asked for is not a failure of the stream: `status` shows no error.
      const [stream] = await listStreams(testDb.database.db);
      assert.deepEqual([stream?.errorStreak, stream?.lastError], [0, null]);
      assert.equal((await recentRuns(testDb.database.db))[0]?.outcome, 'stopped');
    });
  }

  it('a second SIGTERM exits at once', async () => {
    const run = await hangingSync();
    run.child.kill('SIGTERM');
    // The scenario itself, not a wait for a condition: an impatient operator a moment later
    // (two signals sent together may be merged into one by the kernel).
    await new Promise((resolve) => setTimeout(resolve, 200));
    run.child.kill('SIGTERM');
    const exit = await exitWithin(run, SIGNAL_BOUND_MS);
    assert.equal(exit.code, 143, exit.stderr);
    assert.match(exit.stderr, /SIGTERM again, exiting now/);
  });
});
