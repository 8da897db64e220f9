/**
 * `serve` next to `sync` from cron: the lag between runs (the service's head as last seen minus
 * the watermark, shared by every process through the database), and `/ready` judged by the
 * latest `verify`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { fetchText, parseSamples, sampleSum } from '../helpers/http-surface.js';
import { runMain } from '../helpers/run-main.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

let simulator: Simulator;
let url: string;
let testDb: TestDatabase;
let env: Record<string, string>;
/** `serve` with `LEDGER_BASE_URL` (it probes the service's head) and without (the database alone). */
const serves: CliRun[] = [];
let probing: string;
let dbOnly: string;

async function startServe(withService: boolean): Promise<string> {
  const port = await freePort();
  const { LEDGER_BASE_URL: _omit, ...dbEnv } = env;
  serves.push(runCli(['serve', '--http-port', String(port)], withService ? env : dbEnv));
  const base = `http://127.0.0.1:${port}`;
  await waitFor('serve to listen', async () => (await fetchText(`${base}/health`).catch(() => null))?.status);
  return base;
}

async function gauge(base: string, name: string): Promise<number | undefined> {
  const metrics = await fetchText(`${base}/metrics`);
  assert.equal(metrics.status, 200);
  return sampleSum(parseSamples(metrics.body), `ledger_indexer_${name}`, { stream: 'txs' });
}

async function ready(base: string): Promise<{ status: number; missing: string[] }> {
  const answer = await fetchText(`${base}/ready`);
  const streams = (answer.json as { streams?: Array<{ stream: string; missing: string[] }> }).streams ?? [];
  return { status: answer.status, missing: streams.find((s) => s.stream === 'txs')?.missing ?? [] };
}

before(async () => {
  simulator = createSimulator({ records: 200, seed: 74, arrivalsPerSecond: 0 });
  url = (await simulator.listen()).url;
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LOG_LEVEL: 'silent',
  };
  const synced = await runMain(['sync'], env);
  assert.equal(synced.code, 0, synced.err);
  [probing, dbOnly] = await Promise.all([startServe(true), startServe(false)]);
});

after(async () => {
  for (const serve of serves) {
    if (serve.child.exitCode === null) {
      serve.child.kill('SIGTERM');
      await serve.done;
    }
  }
  await simulator?.close();
  await testDb?.drop();
});

describe('serve: the lag between two syncs', () => {
  it('reads 0 after a sync, the records the service added before the next one, and 0 after it', async () => {
    assert.equal(await gauge(probing, 'stream_lag_raw_ids'), 0);
    const age = await gauge(probing, 'stream_head_age_seconds');
    assert.ok(age !== undefined && age < 60, `head seen ${age} s ago`);
    const watermark = simulator.headRawId();

    await fetch(`${url}/_sim/records?count=30`, { method: 'POST' });
    const behind = simulator.headRawId() - watermark;
    assert.ok(behind >= 30, `${behind} rawIds added`);
    // The probe asks the service again once the stored head is a few seconds old.
    await waitFor('the probing serve to see the new head', async () => {
      return (await gauge(probing, 'stream_lag_raw_ids')) === behind;
    });
    // The sighting is kept with the stream: a serve without the service reports the same lag.
    assert.equal(await gauge(dbOnly, 'stream_lag_raw_ids'), behind);
    const status = await runMain(['status', '--json'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' });
    assert.equal(status.code, 0, status.err);
    const txs = (JSON.parse(status.out) as { streams: Array<Record<string, unknown>> }).streams[0];
    assert.equal(txs?.['lagRawIds'], behind);
    assert.equal(txs?.['headRawId'], simulator.headRawId());
    assert.ok(typeof txs?.['headSeenAt'] === 'string', 'the time the head was seen');

    const synced = await runMain(['sync'], env);
    assert.equal(synced.code, 0, synced.err);
    // A scrape within a second of the last one may be answered from it.
    await waitFor('both serves to read the sync', async () => {
      return (
        (await gauge(probing, 'stream_lag_raw_ids')) === 0 &&
        (await gauge(dbOnly, 'stream_lag_raw_ids')) === 0 &&
        (await gauge(dbOnly, 'stream_watermark_raw_id')) === simulator.headRawId()
      );
    });
  });
});

describe('serve: /ready and the latest verify', () => {
  it('answers 503 naming the stream the latest verify found incomplete, until a verify finds it complete', async () => {
    const clean = await runMain(['verify'], env);
    assert.equal(clean.code, 0, clean.out + clean.err);
    assert.deepEqual(await ready(dbOnly), { status: 200, missing: [] });

    // A stored record goes missing below the watermark; verify finds it.
    const db = testDb.database.db;
    await db.execute(sql`CREATE TABLE held AS SELECT * FROM ledger_transactions WHERE raw_id = 42`);
    await db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = 42`);
    const found = await runMain(['verify'], env);
    assert.equal(found.code, 1, found.out);
    const broken = await ready(dbOnly);
    assert.equal(broken.status, 503);
    assert.equal(broken.missing.length, 1, broken.missing.join('\n'));
    assert.match(broken.missing[0] ?? '', /^last verify \(finished .*\) found it incomplete: .*rawIds 42\b/);
    // A scrape within a second of the last one may be answered from it.
    await waitFor(
      '/metrics to show the stream incomplete',
      async () => (await gauge(dbOnly, 'stream_complete')) === 0,
    );

    // A sync that ends well does not clear it, nor does the record coming back: a verify must.
    assert.equal((await runMain(['sync'], env)).code, 0);
    await db.execute(sql`INSERT INTO ledger_transactions SELECT * FROM held`);
    assert.equal((await ready(dbOnly)).status, 503);
    const again = await runMain(['verify'], env);
    assert.equal(again.code, 0, again.out);
    assert.deepEqual(await ready(dbOnly), { status: 200, missing: [] });
    await waitFor(
      '/metrics to show the stream complete',
      async () => (await gauge(dbOnly, 'stream_complete')) === 1,
    );
  });
});
