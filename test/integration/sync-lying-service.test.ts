/**
 * `sync` by key against a service that serves one answer holding a phantom record (rawId 10^15,
 * the real head a few thousand): the phantom is set aside in `rejected_records`, never moves the
 * watermark or a proof, and every record the service lists, before and after, is mirrored.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startHttpServer } from '../helpers/http-server.js';
import {
  ascendingAfter,
  type LyingService,
  PHANTOM_RAW_ID,
  phantomRows,
  provenTop,
  startLyingService,
  watermarkOf,
} from './lying-service.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function setup(
  records: number,
  paging: 'key' | 'page' = 'key',
): Promise<{ sim: Simulator; service: LyingService; database: Database; databaseUrl: string }> {
  const sim = createSimulator({ records, seed: 43, paging, packageDelayMs: 0, burnTargetDelayMs: 0 });
  const { url } = await sim.listen();
  const service = await startLyingService(url);
  const t: TestDatabase = await createTestDatabase();
  cleanups.push(
    () => sim.close(),
    () => service.close(),
    () => t.drop(),
  );
  return { sim, service, database: t.database, databaseUrl: t.url };
}

async function sync(database: Database, url: string) {
  return syncWith(database, url, {});
}

async function syncWith(database: Database, url: string, options: Parameters<typeof syncOnce>[1]) {
  const config = loadConfig({
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RETRY_MIN_MS: '10',
    LEDGER_SETTLE_MS: '0',
  });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    reread: { recheckAfterMs: 0 },
  });
  try {
    return await syncOnce(ctx, options);
  } finally {
    await ctx.close();
  }
}

async function assertPhantomSetAside(database: Database) {
  const rows = await phantomRows(database.db);
  assert.ok(rows.length >= 1, 'the phantom is kept in rejected_records');
  for (const row of rows) {
    assert.equal(row.raw_id, null, 'with no rawId a walk could move on');
    assert.match(row.reason, new RegExp(`rawId ${PHANTOM_RAW_ID}`));
  }
}

describe('sync by key against a service that lies once', () => {
  it('a phantom in the first backfill in lanes: no span proven unread, the mirror equal, the real record stored', async () => {
    const { sim, service, database } = await setup(12_000);
    service.lie({ when: ascendingAfter(5_000), at: 'middle', absurdTimestamp: true });
    const result = await sync(database, service.url);
    assert.equal(service.told(), true, 'the lie was served');
    assert.equal(result.streams[0]?.finished, true);
    assert.equal(await watermarkOf(database.db), sim.headRawId());
    const top = await provenTop(database.db);
    assert.ok(top === null || top <= sim.headRawId(), `proofs end at ${top}, the head is ${sim.headRawId()}`);
    await assertMirrorsTruth(database.db, sim);
    await assertPhantomSetAside(database);
  });

  it('a phantom ending a tail answer: the watermark stays at the head and later runs fetch every new record', async () => {
    const { sim, service, database } = await setup(1_100);
    await sync(database, service.url);
    const head = sim.headRawId();
    sim.addRecords(250);
    service.lie({ when: ascendingAfter(head - 10), at: 'end' });
    await sync(database, service.url);
    assert.equal(service.told(), true, 'the lie was served');
    assert.equal(await watermarkOf(database.db), sim.headRawId(), 'the watermark is the real head');
    await assertPhantomSetAside(database);
    // The service no longer lies: what it lists afterwards is all fetched.
    sim.addRecords(300);
    await sync(database, service.url);
    assert.equal(await watermarkOf(database.db), sim.headRawId());
    await assertMirrorsTruth(database.db, sim);
  });

  it('a phantom at the top of the newest records a tail reads first: set aside, the tail goes on', async () => {
    const { sim, service, database } = await setup(1_100);
    await sync(database, service.url);
    sim.addRecords(40);
    service.lie({ when: (request) => request.query.get('order')?.toLowerCase() === 'desc', at: 'end' });
    await sync(database, service.url);
    assert.equal(service.told(), true, 'the lie was served');
    assert.equal(await watermarkOf(database.db), sim.headRawId());
    await assertPhantomSetAside(database);
    sim.addRecords(120);
    await sync(database, service.url);
    await assertMirrorsTruth(database.db, sim);
  });
});

describe('a mirror a phantom blinded before the screen', () => {
  it('verify names the phantom; with its row deleted, sync --full stores what it hid and tails see every arrival', async () => {
    const { sim, service, database, databaseUrl } = await setup(1_500);
    await sync(database, service.url);
    const { db } = database;
    // As an earlier version left it: the phantom, a copy of a real record (its hash) stored at
    // rawId 10^15 in that record's place, and the watermark moved there.
    const real = 700;
    await db.execute(
      sql`CREATE TEMP TABLE phantom AS SELECT * FROM ledger_transactions WHERE raw_id = ${real}`,
    );
    await db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${real}`);
    await db.execute(sql`UPDATE phantom SET raw_id = ${PHANTOM_RAW_ID}`);
    await db.execute(sql`INSERT INTO ledger_transactions SELECT * FROM phantom`);
    await db.execute(sql`UPDATE sync_streams SET watermark = ${PHANTOM_RAW_ID} WHERE key = 'txs'`);
    sim.addRecords(50);
    const verified = await runCli(['verify', '--json'], {
      DATABASE_URL: databaseUrl,
      LEDGER_BASE_URL: service.url,
      LOG_LEVEL: 'silent',
    }).done;
    assert.equal(verified.code, 1);
    assert.match(verified.stdout, new RegExp(`${PHANTOM_RAW_ID}`), 'verify names the phantom');
    await db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${PHANTOM_RAW_ID}`);
    const full = await syncWith(database, service.url, { full: true });
    assert.equal(full.streams[0]?.finished, true);
    assert.equal(await watermarkOf(db), sim.headRawId(), 'the full walk ends at the real head');
    sim.addRecords(80);
    await sync(database, service.url);
    await assertMirrorsTruth(db, sim);
  });
});

describe('sync by page number against a service that lies once', () => {
  const onPage = (page: number) => (request: { query: URLSearchParams }) =>
    request.query.get('page') === String(page);

  it('a phantom on a page of the first backfill: set aside, the mirror equal, no proof past the head', async () => {
    const { sim, service, database } = await setup(3_000, 'page');
    service.lie({ when: onPage(120), at: 'middle', absurdTimestamp: true });
    const result = await sync(database, service.url);
    assert.equal(service.told(), true, 'the lie was served');
    assert.equal(result.streams[0]?.dialect, 'page');
    assert.equal(await watermarkOf(database.db), sim.headRawId());
    const top = await provenTop(database.db);
    assert.ok(top === null || top <= sim.headRawId(), `proofs end at ${top}, the head is ${sim.headRawId()}`);
    await assertMirrorsTruth(database.db, sim);
    await assertPhantomSetAside(database);
  });

  it("a phantom topping a tail's page 1: the watermark stays at the head, later runs fetch every new record", async () => {
    const { sim, service, database } = await setup(500, 'page');
    await sync(database, service.url);
    sim.addRecords(25);
    service.lie({ when: onPage(1), at: 'end' });
    await sync(database, service.url);
    assert.equal(service.told(), true, 'the lie was served');
    assert.equal(await watermarkOf(database.db), sim.headRawId());
    await assertPhantomSetAside(database);
    sim.addRecords(60);
    await sync(database, service.url);
    assert.equal(await watermarkOf(database.db), sim.headRawId());
    await assertMirrorsTruth(database.db, sim);
  });
});

describe('sync against a service that asks for a day-long wait', () => {
  it('exits 1 within seconds with one line naming the wait', async () => {
    const refusing = await startHttpServer(() => ({
      status: 429,
      headers: { 'retry-after': '86400' },
      body: { error: 'err_rate_limited' },
    }));
    cleanups.push(() => refusing.close());
    const t = await createTestDatabase();
    cleanups.push(() => t.drop());
    const started = performance.now();
    const run = await runCli(['sync', '--base-url', refusing.baseUrl], {
      DATABASE_URL: t.url,
      LEDGER_PAGING: 'key',
      LOG_LEVEL: 'silent',
    }).done;
    const seconds = (performance.now() - started) / 1000;
    assert.equal(run.code, 1, run.stderr);
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(
      lines[0]!,
      /asks to wait 86400 s \(24 h\) before the next request \(HTTP 429, Retry-After\)/,
    );
    assert.match(lines[0]!, /LEDGER_MAX_RETRY_WAIT_MS/);
    assert.ok(seconds < 15, `ended after ${seconds.toFixed(1)} s`);
    assert.equal(refusing.requests.length, 1, 'asked once, not again before the wait was over');
  });
});
