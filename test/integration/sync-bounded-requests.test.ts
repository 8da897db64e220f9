import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { type ScriptedReply, startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { endlessBody, trickleBody } from '../helpers/slow-bodies.js';
import { type CliRun, runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

let testDb: TestDatabase;
let simulator: Simulator;
let simulatorUrl: string;
const servers: TestHttpServer[] = [];

before(async () => {
  testDb = await createTestDatabase();
  // Page numbers: these tests hang and hedge list pages.
  simulator = createSimulator({ records: 300, seed: 47, paging: 'page' });
  simulatorUrl = (await simulator.listen()).url;
});

after(async () => {
  for (const server of servers) await server.close();
  await simulator.close();
  await testDb.drop();
});

function env(baseUrl: string, extra: Record<string, string>): Record<string, string> {
  return {
    LEDGER_BASE_URL: baseUrl,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RETRIES: '2',
    LEDGER_RETRY_MIN_MS: '20',
    LEDGER_RETRY_MAX_MS: '50',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** The simulator's answer to the same request, or `misbehave` where it says so. */
async function proxy(
  misbehave: (path: string, url: string) => ScriptedReply | undefined,
): Promise<TestHttpServer> {
  const server = await startHttpServer(async (request) => {
    const instead = misbehave(request.path, request.url);
    if (instead) return instead;
    const answer = await fetch(simulatorUrl + request.url);
    return {
      status: answer.status,
      headers: { 'content-type': 'application/json' },
      body: await answer.text(),
    };
  });
  servers.push(server);
  return server;
}

/** What the run wrote to stderr besides its progress lines (`txs backfill page 1/30 …`). */
function errorLines(stderr: string): string[] {
  return stderr
    .trim()
    .split('\n')
    .filter((line) => !/^txs (backfill|tail) /.test(line));
}

/** Kills the run when it outlives `limitMs`, so a hang fails the test instead of stalling it. */
async function finishWithin(run: CliRun, limitMs: number) {
  const timer = setTimeout(() => run.child.kill('SIGKILL'), limitMs);
  const start = performance.now();
  const result = await run.done;
  clearTimeout(timer);
  return { ...result, elapsedMs: performance.now() - start };
}

/** The process's resident memory in bytes, from /proc; 0 once it is gone. */
function residentBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

describe('bounded requests on the command line', () => {
  it('fails a body trickling a byte every 500 ms at the total deadline: exit 1, one line, in bounded time', async () => {
    const server = await proxy((path) => (path === '/info' ? { respond: trickleBody(500) } : undefined));
    // 3 attempts of 1.5 s, the backoff and the start of the command; without a deadline it never ends.
    const run = runCli(['sync'], env(server.baseUrl, { LEDGER_REQUEST_TIMEOUT_MS: '1500' }));
    const { code, stderr, elapsedMs } = await finishWithin(run, 40_000);
    assert.equal(code, 1, stderr);
    const lines = errorLines(stderr);
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0] ?? '', /the ledger service failed: no complete answer within 1500 ms/);
    // Three attempts of /info; the walks go beside them, and what they read is kept.
    assert.equal(server.requests.filter((r) => r.path === '/info').length, 3);
    assert.ok(elapsedMs >= 4500 && elapsedMs < 30_000, `exited after ${elapsedMs} ms`);
    await assertMirrorsTruth(testDb.database.db, simulator);
  });

  it('cuts off a 200 body that never ends at the size limit, with the memory bounded, and retries it', async () => {
    const server = await proxy((path) => (path === '/info' ? { respond: endlessBody() } : undefined));
    const run = runCli(['sync'], env(server.baseUrl, { LEDGER_REQUEST_TIMEOUT_MS: '60000' }));
    const limit = 300 * 1024 * 1024;
    let peak = 0;
    const watch = setInterval(() => {
      peak = Math.max(peak, residentBytes(run.child.pid ?? 0));
      if (peak > limit) run.child.kill('SIGKILL');
    }, 20);
    const { code, stderr } = await finishWithin(run, 60_000);
    clearInterval(watch);
    assert.ok(peak <= limit, `peak resident memory ${Math.round(peak / 2 ** 20)} MB`);
    assert.equal(code, 1, stderr);
    const lines = errorLines(stderr);
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0] ?? '', /the ledger service failed: .*body larger than 8388608 bytes/);
    assert.equal(server.requests.filter((r) => r.path === '/info').length, 3);
  });

  it('does not wait for a page whose first request hangs: a second request answers it', async () => {
    // A first backfill: the runs above mirrored the list while /info failed.
    await testDb.database.db.execute(
      sql`TRUNCATE ledger_transactions, ledger_tx_rechecks, sync_streams, sync_runs, backfill_runs CASCADE`,
    );
    let hung = false;
    const server = await proxy((path, url) => {
      if (path !== '/txs' || !/[?&]page=20(&|$)/.test(url) || hung) return undefined;
      hung = true;
      return { hang: true };
    });
    // The hanging request alone would hold the walk for the whole minute of its deadline.
    const run = runCli(
      ['sync'],
      env(server.baseUrl, {
        LEDGER_REQUEST_TIMEOUT_MS: '60000',
        LEDGER_CONCURRENCY: '4',
        LEDGER_HEDGE_AFTER: '3',
        LEDGER_HEDGE_MIN_MS: '200',
      }),
    );
    const { code, stderr, elapsedMs } = await finishWithin(run, 90_000);
    assert.equal(code, 0, stderr);
    assert.ok(elapsedMs < 40_000, `sync took ${elapsedMs} ms`);
    assert.ok(hung, 'page 20 was requested');
    assert.equal(server.requests.filter((r) => /[?&]page=20(&|$)/.test(r.url)).length, 2);
    await assertMirrorsTruth(testDb.database.db, simulator);
  });
});
