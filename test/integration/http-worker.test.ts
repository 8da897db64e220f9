import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryOne } from '../../src/db/rows.js';
import { freePort } from '../helpers/free-port.js';
import { fetchText, parseSamples, type Sample, sampleSum } from '../helpers/http-surface.js';
import { type Setup, setUp, syncToTruth } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';

async function scrape(base: string): Promise<Sample[]> {
  const metrics = await fetchText(`${base}/metrics`);
  assert.equal(metrics.status, 200);
  return parseSamples(metrics.body);
}

const pagesWritten = (samples: Sample[]) => sampleSum(samples, 'ledger_indexer_pages_written_total') ?? 0;

describe('worker --http-port', () => {
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
  });

  it('answers every path while it syncs, its counters moving as pages are written', async () => {
    setup = await setUp('http-worker', { records: 3000, seed: 72, faults: { latencyMs: 15 } });
    const current = setup;
    const port = await freePort();
    const worker = current.start(['--http-port', String(port)]);
    await worker.ready;
    const base = `http://127.0.0.1:${port}`;
    assert.match(worker.log(), /"msg":"http surface listening"/);

    assert.deepEqual((await fetchText(`${base}/health`)).json, { status: 'ok' });
    assert.equal((await fetchText(`${base}/ready`)).status, 503, 'not ready before any backfill');
    assert.equal(pagesWritten(await scrape(base)), 0);

    await current.queues.add('sync-stream', { stream: {} }, { deduplicationId: 'first' });
    const first = await waitFor('pages to be written', async () => {
      const samples = await scrape(base);
      return pagesWritten(samples) > 0 ? samples : undefined;
    });
    const second = await waitFor('more pages to be written', async () => {
      const samples = await scrape(base);
      return pagesWritten(samples) > pagesWritten(first) ? samples : undefined;
    });
    const inserted = (s: Sample[]) =>
      sampleSum(s, 'ledger_indexer_records_written_total', { kind: 'inserted' }) ?? 0;
    assert.ok(inserted(second) > inserted(first), 'records inserted grew between two scrapes');
    const ok = (s: Sample[]) =>
      sampleSum(s, 'ledger_indexer_service_requests_total', { endpoint: 'txs', outcome: 'ok' }) ?? 0;
    assert.ok(ok(second) > 0 && ok(second) >= ok(first), 'requests to the service counted');
    assert.ok((sampleSum(second, 'ledger_indexer_service_request_duration_seconds_count') ?? 0) > 0);
    // Counters of this process carry its host:pid, so several workers add up.
    const series = second.find((s) => s.name === 'ledger_indexer_pages_written_total');
    assert.match(series?.labels.process ?? '', new RegExp(`:${worker.child.pid}$`));

    await syncToTruth(current, 90_000);
    const ready = await fetchText(`${base}/ready`);
    assert.equal(ready.status, 200, ready.body);
    const status = await fetchText(`${base}/status`);
    assert.equal(status.status, 200);
    const report = status.json as { streams: Array<{ key: string; watermark: number }>; queues: unknown };
    assert.equal(report.streams.find((s) => s.key === 'txs')?.watermark, current.sim.headRawId());
    assert.ok(
      report.queues && typeof report.queues === 'object' && 'queues' in report.queues,
      'queue depths',
    );

    // The status page shows the worker's queues beside the stream.
    const index = await fetchText(`${base}/`);
    assert.equal(index.status, 200);
    assert.match(index.body, /<section id="queues">/);
    for (const queue of report.queues.queues as Array<{ queue: string }>)
      assert.ok(index.body.includes(`<td class="key">${queue.queue}`), queue.queue);
    assert.match(index.body, /data-stream="txs"/);

    const done = await scrape(base);
    const { records } = await queryOne<{ records: string }>(
      current.db.database.db,
      sql`select count(*)::text as records from ledger_transactions`,
    );
    assert.equal(inserted(done), Number(records), 'every stored record was counted once as inserted');
    assert.equal(sampleSum(done, 'ledger_indexer_stream_complete', { stream: 'txs' }), 1);
    assert.equal(sampleSum(done, 'ledger_indexer_stream_lag_raw_ids', { stream: 'txs' }), 0);
    assert.ok(
      sampleSum(done, 'ledger_indexer_queue_jobs', { state: 'waiting' }) !== undefined,
      'queue gauges',
    );
  });

  it('counts retries and rate-limit pauses when the service answers 429', async () => {
    const current = setup;
    assert.ok(current, 'runs after the sync above');
    const base = `http://127.0.0.1:${await portOf(current)}`;
    const before = await scrape(base);
    current.sim.setFaults({ rateLimitRate: 0.5, retryAfterSeconds: 1 });
    current.sim.addRecords(30);
    await current.queues.add('sync-stream', { stream: {} }, { deduplicationId: 'rate-limited' });
    await waitFor(
      'a rate-limit pause and a retry to be counted',
      async () => {
        const now = await scrape(base);
        const pauses = sampleSum(now, 'ledger_indexer_rate_limit_pauses_total') ?? 0;
        const retries = sampleSum(now, 'ledger_indexer_service_retries_total') ?? 0;
        return (
          pauses > (sampleSum(before, 'ledger_indexer_rate_limit_pauses_total') ?? 0) &&
          retries > (sampleSum(before, 'ledger_indexer_service_retries_total') ?? 0)
        );
      },
      { timeoutMs: 20_000, everyMs: 200 },
    );
    const after = await scrape(base);
    assert.ok(
      (sampleSum(after, 'ledger_indexer_service_requests_total', { outcome: 'rate_limited' }) ?? 0) > 0,
    );
  });

  it('asks the service for the heads once per probe age however often /status and / are read, counted in its metrics', async () => {
    const current = setup;
    assert.ok(current, 'runs after the sync above');
    const base = `http://127.0.0.1:${await portOf(current)}`;
    current.sim.setFaults({});
    const listPages = () =>
      Object.values(current.sim.stats()['GET /txs'] ?? {}).reduce((sum, n) => sum + n, 0);
    // The rate-limited job above may still be reading its pages: only the probes may count.
    await waitFor(
      'the jobs before to finish',
      async () => {
        const counts = await Promise.all(
          [current.queues.sync, current.queues.backfill].map((q) =>
            q.getJobCounts('waiting', 'prioritized', 'delayed', 'active'),
          ),
        );
        return counts.every((c) => Object.values(c).every((n) => n === 0));
      },
      { timeoutMs: 30_000, everyMs: 200 },
    );
    const headReads = (s: Sample[]) =>
      sampleSum(s, 'ledger_indexer_service_requests_total', { endpoint: 'txs' }) ?? 0;
    const before = { pages: listPages(), counted: headReads(await scrape(base)) };
    for (let i = 0; i < 5; i++) {
      assert.equal((await fetchText(`${base}/status`)).status, 200);
      assert.equal((await fetchText(`${base}/`)).status, 200);
    }
    const asked = listPages() - before.pages;
    assert.ok(asked <= 1, `${asked} page-1 reads for ten reloads within the probe's age`);
    assert.equal(
      headReads(await scrape(base)) - before.counted,
      asked,
      'each counted as a request of the worker',
    );
  });
});

/** The port the first worker was started with. */
async function portOf(setup: Setup): Promise<number> {
  const args = setup.workers[0]?.child.spawnargs ?? [];
  return Number(args[args.indexOf('--http-port') + 1]);
}
