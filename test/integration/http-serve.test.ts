import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryOne } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, dropDatabase, type TestDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { fetchText, parseSamples, sampleSum } from '../helpers/http-surface.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

let simulator: Simulator;
let testDb: TestDatabase;
let syncEnv: Record<string, string>;
let serve: CliRun | undefined;
let base: string;

before(async () => {
  // Slow pages by page number, one at a time: the backfill lasts long enough to be seen in progress.
  simulator = createSimulator({ records: 400, seed: 71, paging: 'page', faults: { latencyMs: 40 } });
  const { url } = await simulator.listen();
  testDb = await createTestDatabase();
  syncEnv = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '1',
    LOG_LEVEL: 'silent',
  };
});

after(async () => {
  if (serve && serve.child.exitCode === null) serve.child.kill('SIGKILL');
  await simulator.close();
  await testDb.drop();
});

describe('serve: the HTTP surface from the database alone', () => {
  it('starts on --http-port and answers /health, and /ready 503 before any stream is synced', async () => {
    const port = await freePort();
    // No LEDGER_BASE_URL: serve reads the database alone.
    serve = runCli(['serve', '--http-port', String(port)], { DATABASE_URL: testDb.url, LOG_LEVEL: 'info' });
    base = `http://127.0.0.1:${port}`;
    await waitFor(
      'serve to listen',
      async () => (await fetchText(`${base}/health`).catch(() => null))?.status,
    );
    const health = await fetchText(`${base}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { status: 'ok' });
    const ready = await fetchText(`${base}/ready`);
    assert.equal(ready.status, 503);
    assert.match(String((ready.json as { reason: string }).reason), /no stream synced yet/);
    const index = await fetchText(`${base}/`);
    assert.equal(index.status, 200);
    assert.match(index.contentType ?? '', /^text\/html/);
    assert.match(index.body, /id="headline">no stream synced yet/);
    for (const path of ['/health', '/ready', '/status', '/metrics'])
      assert.ok(index.body.includes(`href="${path}"`));
  });

  it('answers /ready 503 with what is missing while the backfill runs, and 200 once it is done', async () => {
    const sync = runCli(['sync'], syncEnv);
    const during = await waitFor('/ready to name the backfill in progress', async () => {
      const ready = await fetchText(`${base}/ready`);
      const streams =
        (ready.json as { streams?: Array<{ stream: string; missing: string[] }> }).streams ?? [];
      const txs = streams.find((s) => s.stream === 'txs');
      return txs?.missing.some((m) => /backfill in progress/.test(m)) ? ready : undefined;
    });
    assert.equal(during.status, 503);
    const metricsDuring = parseSamples((await fetchText(`${base}/metrics`)).body);
    assert.equal(sampleSum(metricsDuring, 'ledger_indexer_stream_complete', { stream: 'txs' }), 0);
    const progress = sampleSum(metricsDuring, 'ledger_indexer_stream_backfill_progress_ratio', {
      stream: 'txs',
    });
    assert.ok(progress !== undefined && progress >= 0 && progress < 1, `progress ${progress}`);

    const done = await sync.done;
    assert.equal(done.code, 0, done.stderr);
    const ready = await fetchText(`${base}/ready`);
    assert.equal(ready.status, 200, ready.body);
    assert.deepEqual(ready.json, { ready: true, streams: [{ stream: 'txs', ready: true, missing: [] }] });
  });

  it('answers /status with exactly what status --json prints', async () => {
    const printed = await runCli(['status', '--json'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' })
      .done;
    assert.equal(printed.code, 0, printed.stderr);
    const served = await fetchText(`${base}/status`);
    assert.equal(served.status, 200);
    assert.deepEqual(served.json, JSON.parse(printed.stdout));
    assert.equal(
      (served.json as { streams: Array<{ watermark: number }> }).streams[0]?.watermark,
      simulator.headRawId(),
    );
  });

  it('exports the state gauges read from the database', async () => {
    const { records } = await queryOne<{ records: string }>(
      testDb.database.db,
      sql`select count(*)::text as records from ledger_transactions`,
    );
    const metrics = await fetchText(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.contentType ?? '', /^text\/plain/);
    const samples = parseSamples(metrics.body);
    assert.equal(sampleSum(samples, 'ledger_indexer_database_up'), 1);
    assert.equal(sampleSum(samples, 'ledger_indexer_records_stored'), Number(records));
    assert.equal(
      sampleSum(samples, 'ledger_indexer_deferred_indexes'),
      0,
      'built at the end of the backfill',
    );
    assert.equal(sampleSum(samples, 'ledger_indexer_stream_complete', { stream: 'txs' }), 1);
    assert.equal(sampleSum(samples, 'ledger_indexer_stream_backfill_progress_ratio', { stream: 'txs' }), 1);
    assert.equal(
      sampleSum(samples, 'ledger_indexer_stream_watermark_raw_id', { stream: 'txs' }),
      simulator.headRawId(),
    );
    const lastSuccess = sampleSum(samples, 'ledger_indexer_stream_last_success_timestamp_seconds', {
      stream: 'txs',
    });
    assert.ok(lastSuccess !== undefined && Math.abs(lastSuccess - Date.now() / 1000) < 120, `${lastSuccess}`);
    assert.ok(
      (sampleSum(samples, 'ledger_indexer_process_resident_memory_bytes') ?? 0) > 0,
      'process metrics',
    );
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    assert.equal((await fetchText(`${base}/nope`)).status, 404);
    assert.equal((await fetchText(`${base}/metrics/extra`)).status, 404);
    const post = await fetchText(`${base}/health`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal((await fetchText(`${base}/ready`, { method: 'DELETE' })).status, 405);
  });

  it('answers /health 503 once its database is gone, then stops on SIGTERM with exit 0', async () => {
    await dropDatabase(new URL(testDb.url).pathname.slice(1));
    const health = await fetchText(`${base}/health`);
    assert.equal(health.status, 503, health.body);
    assert.match(String((health.json as { reason: string }).reason), /^the database failed: /);
    const ready = await fetchText(`${base}/ready`);
    assert.equal(ready.status, 503);
    const index = await fetchText(`${base}/`);
    assert.equal(index.status, 503);
    assert.match(index.body, /status unavailable/);
    // /metrics reuses a read for up to a second: the next one finds the database gone.
    await waitFor(
      'database_up 0 on /metrics',
      async () =>
        sampleSum(parseSamples((await fetchText(`${base}/metrics`)).body), 'ledger_indexer_database_up') ===
        0,
      { timeoutMs: 10_000, everyMs: 200 },
    );
    serve?.child.kill('SIGTERM');
    const stopped = await serve?.done;
    assert.equal(stopped?.code, 0, stopped?.stderr);
    assert.match(stopped?.stdout ?? '', /listening on http:\/\/127\.0\.0\.1:/);
    assert.ok(!/postgres:\/\/[^@\s]*:[^@\s*]+@/.test(stopped?.stderr ?? ''), 'no password in the log');
  });
});
