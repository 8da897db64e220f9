/**
 * `status` names the dialect an idle stream is read in, as its last run recorded it: by key with
 * the count the service accepted, or by page; and the pages that run committed.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createContext } from '../../src/app/context.js';
import { buildStatusReport } from '../../src/app/status/status-report.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runCli } from './sync-cli-run.js';

const databases: TestDatabase[] = [];
const simulators: Simulator[] = [];
after(async () => {
  for (const sim of simulators) await sim.close();
  for (const db of databases) await db.drop();
});

async function setup(options: SimulatorOptions) {
  const sim = createSimulator({ packageDelayMs: 0, burnTargetDelayMs: 0, ...options });
  simulators.push(sim);
  const { url } = await sim.listen();
  const testDb = await createTestDatabase();
  databases.push(testDb);
  return { sim, url, testDb };
}

/** One `sync` in this process, the dialect named (nothing kept per service, so only the run says it). */
async function sync(database: Database, env: Record<string, string>) {
  const config = loadConfig({ LEDGER_REQUESTS_PER_SECOND: '0', LEDGER_RETRY_MIN_MS: '10', ...env });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    reread: { recheckAfterMs: 0 },
  });
  try {
    const result = await syncOnce(ctx, { reread: false });
    return result.streams[0];
  } finally {
    await ctx.close();
  }
}

/** The global stream as `status` reports it, the service not asked. */
async function statusOf(database: Database) {
  const report = await buildStatusReport({
    config: loadConfig({}),
    database,
    logger: silentLogger(),
    signal: new AbortController().signal,
  });
  const stream = report.streams.find((s) => s.key === 'txs');
  assert.ok(stream, 'the global stream is reported');
  return stream;
}

describe('status names the dialect of an idle stream', () => {
  it('by key, with the count the service accepted, and the pages of the last run', async () => {
    const { sim, url, testDb } = await setup({ records: 700, seed: 61, paging: 'key', refuseCountAbove: 50 });
    const walked = await sync(testDb.database, { LEDGER_BASE_URL: url, LEDGER_PAGING: 'key' });
    assert.equal(walked?.dialect, 'key');
    let stream = await statusOf(testDb.database);
    assert.equal(stream.walk, null);
    assert.deepEqual(stream.reading, { dialect: 'key', count: 50, from: 'run' });
    assert.equal(stream.lastRun?.outcome, 'ok');
    assert.equal(stream.lastRun?.pages, walked?.pages);

    // A tail: the last run is the tail's, a request or two.
    sim.addRecords(30);
    const tail = await sync(testDb.database, { LEDGER_BASE_URL: url, LEDGER_PAGING: 'key' });
    stream = await statusOf(testDb.database);
    assert.deepEqual(stream.reading, { dialect: 'key', count: 50, from: 'run' });
    assert.equal(stream.lastRun?.pages, tail?.pages);
    assert.ok(
      (tail?.pages ?? 0) >= 1 && (tail?.pages ?? 0) <= 3,
      `${tail?.pages} pages for a tail of 30 records`,
    );

    const table = await runCli(['status'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' }).done;
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /READ BY\s+LAST RUN/);
    assert.match(table.stdout, new RegExp(`^txs .*idle\\s+key, count 50\\s+${tail?.pages} pages?\\s`, 'm'));
  });

  it('by page', async () => {
    const { url, testDb } = await setup({ records: 300, seed: 62, paging: 'both' });
    const walked = await sync(testDb.database, { LEDGER_BASE_URL: url, LEDGER_PAGING: 'page' });
    const stream = await statusOf(testDb.database);
    assert.equal(stream.walk, null);
    assert.deepEqual(stream.reading, { dialect: 'page', count: null, from: 'run' });
    assert.equal(stream.lastRun?.pages, walked?.pages);
    assert.ok((walked?.pages ?? 0) >= 30, `${walked?.pages} pages of ten for 300 records`);
  });
});
