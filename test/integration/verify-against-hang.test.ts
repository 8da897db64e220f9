/**
 * `verify --against` a simulator URL that accepts connections and never answers: the digest
 * requests give up after LEDGER_REQUEST_TIMEOUT_MS and LEDGER_RETRIES like every request to the
 * service, and SIGINT/SIGTERM end the command at once with 130/143.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

let server: TestHttpServer;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  server = await startHttpServer(() => ({ hang: true }));
  testDb = await createTestDatabase();
  env = { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' };
});

after(async () => {
  await server.close();
  await testDb.drop();
});

async function exitWithin(run: CliRun, ms: number): Promise<Awaited<CliRun['done']>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`verify still running after ${ms} ms:\n${run.stderr().slice(-1500)}`));
    }, ms);
  });
  try {
    return await Promise.race([run.done, late]);
  } finally {
    clearTimeout(timer);
  }
}

const digestRequests = () => server.requests.filter((r) => r.path === '/_sim/digest').length;

describe('verify --against a simulator that never answers', () => {
  it('gives up after the request timeout and the retries set for every request', async () => {
    const before = digestRequests();
    const run = runCli(['verify', '--against', server.baseUrl], {
      ...env,
      LEDGER_REQUEST_TIMEOUT_MS: '300',
      LEDGER_RETRIES: '2',
      LEDGER_RETRY_MIN_MS: '0',
      LEDGER_RETRY_MAX_MS: '0',
    });
    // Three tries of 300 ms, plus the start of a process; the default would wait 600 s a try.
    const exit = await exitWithin(run, 20_000);
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(digestRequests() - before, 3, 'one try and two retries');
    const lines = exit.stderr.trim().split('\n');
    assert.equal(lines.length, 1, exit.stderr);
    assert.match(
      lines[0]!,
      /^ledger-indexer verify: the simulator \(http:\/\/127\.0\.0\.1:\d+\/?\): no complete answer within 300 ms/,
    );
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} while it waits for the digest ends it at once with ${code}`, async () => {
      const before = digestRequests();
      // The default deadline: 600 s a try, so only the signal can end it in time.
      const run = runCli(['verify', '--against', server.baseUrl], env);
      await waitFor('the digest request to reach the server', () => digestRequests() > before, {
        timeoutMs: 30_000,
      });
      run.child.kill(signal);
      const exit = await exitWithin(run, 9_000);
      assert.equal(exit.code, code, exit.stderr);
      assert.equal(exit.stderr.trim(), `ledger-indexer verify: stopped by ${signal}`);
    });
  }
});
