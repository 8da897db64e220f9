import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const RECORDS = 600;

interface Run {
  rows: number;
  expectedRows: number | null;
  rowsMatch: boolean | null;
  wallMs: number;
  rowsPerSecond: number;
  pagesRequested: number | null;
  listRequests: { key: number; page: number };
}

function isRun(value: unknown): value is Run {
  return typeof value === 'object' && value !== null && 'rowsPerSecond' in value;
}

describe('npm run bench --quick', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  const out = join(dir, 'results.json');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reports every figure and ratio, with row counts equal to the simulator', {
    // A bound for a hung run, not a speed figure: the benchmark measures speed itself.
    timeout: 420_000,
  }, async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/main.ts',
        '--quick',
        '--records',
        String(RECORDS),
        '--workers',
        '2',
        '--out',
        out,
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(code, 0, `bench exited ${code}: ${stderr.slice(-2000)}`);
    assert.match(stdout, /indexer ÷ baseline/);

    const results = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(results.schema, 'ledger-indexer-bench/1');
    assert.ok(
      results.machine.cores >= 1 && results.machine.memoryBytes > 0 && results.machine.node.startsWith('v'),
    );

    const backfill = results.scenarios.backfill;
    for (const name of [
      'indexerSync',
      'indexerWorkers',
      'baseline',
      'batchBaseline',
      'httpCeiling',
      'dbCeiling',
      'pipelineCeiling',
    ]) {
      const run = backfill[name];
      assert.ok(isRun(run), `backfill.${name} was measured: ${JSON.stringify(run)}`);
      assert.ok(run.wallMs > 0 && run.rowsPerSecond > 0, `backfill.${name} has a time and a rate`);
      assert.equal(run.rows, run.expectedRows, `backfill.${name} row count equals the simulator's`);
    }
    assert.ok(
      backfill.indexerSync.expectedRows > RECORDS * 0.9,
      'the simulator served the records asked for',
    );
    assert.ok(backfill.indexerSync.pagesRequested >= Math.ceil(backfill.indexerSync.expectedRows / 10));
    assert.ok(backfill.indexerSync.peakRssBytes > 10_000_000, 'peak memory of the sync process is measured');
    // The batch scripts run as programs of their own, timed from spawn to exit as sync is, their
    // own clock (first request to last write) kept in the note.
    for (const script of [backfill.batchBaseline, results.scenariosByKey.backfill.batchBaseline]) {
      assert.ok(
        script.peakRssBytes > 10_000_000 && script.cpuMs > 0,
        `script measured as a process: ${JSON.stringify(script)}`,
      );
      const own = /its own clock, first request to last write: ([\d.]+) s/.exec(script.note ?? '');
      assert.ok(
        own !== null && Number(own[1]) * 1000 <= script.wallMs,
        `the script's own clock is kept: ${script.note}`,
      );
    }
    assert.equal(backfill.indexerWorkers.peakRssPerProcessBytes.length, 2);

    const latency = results.scenarios.latency;
    assert.ok(isRun(latency.run) && latency.run.rowsMatch === true);
    assert.equal(latency.idealRowsPerSecond, (32 * 10) / 0.05);

    // 200 ms away: sync by key at 50 and 100 a second, the workers at 50, a tail far behind at 50,
    // sync by page at 50.
    const distance = results.distance;
    assert.deepEqual(
      distance.runs.map((r: { what: string; dialect: string; requestsPerSecond: number }) =>
        [r.what, r.dialect, r.requestsPerSecond].join(' '),
      ),
      ['sync page 50', 'sync key 50', 'workers key 50', 'sync key 100', 'catch-up key 50'],
    );
    for (const r of distance.runs) {
      assert.ok(isRun(r.run) && r.run.rowsMatch === true, `${r.what} ${r.dialect}: every record`);
      assert.equal(typeof r.refused, 'number');
      assert.ok(r.requests >= r.run.listRequests.key + r.run.listRequests.page);
    }

    const tail = results.scenarios.tail;
    assert.equal(tail.rows, tail.expectedRows);
    assert.equal(tail.idealPages, Math.ceil(tail.newRecords / 10) + 1);
    assert.ok(tail.pagesRequested >= 1);

    const fresh = results.scenarios.freshness;
    assert.ok(fresh.arrived > 0, `records arrived during the freshness window: ${JSON.stringify(fresh)}`);
    assert.equal(fresh.stored, fresh.arrived);
    assert.ok(fresh.delayMs.p50 <= fresh.delayMs.p95 && fresh.delayMs.p95 <= fresh.delayMs.max);

    const status = results.scenarios.statusFreshness;
    assert.deepEqual(
      status.runs.map((r: { mode: string }) => r.mode),
      ['workers', 'sync'],
    );
    for (const run of status.runs) {
      assert.ok(run.arrived > 0 && run.all.changes > run.arrived, `changes measured: ${JSON.stringify(run)}`);
      assert.equal(run.all.changes, run.packaged.changes + run.targetHash.changes);
      assert.equal(
        run.packaged.changes,
        run.arrived,
        'every record that arrived was packaged at the service',
      );
      assert.ok(run.all.p50 <= run.all.p95 && run.all.p95 <= run.all.max);
      assert.ok(
        run.requests > 0 && run.requestsPerArrival === Math.round((run.requests / run.arrived) * 1000) / 1000,
      );
    }
    for (const run of status.runs) {
      const byRoute = Object.values(run.requestsByRoute as Record<string, number>);
      assert.equal(
        byRoute.reduce((sum, count) => sum + count, 0),
        run.requests,
        'the routes add up',
      );
    }
    assert.ok(status.runs[1].syncRuns >= 2, 'sync ran again and again');
    assert.match(stdout, /status freshness 20\/s +workers ×\d, every 1\.0 s/);
    assert.match(stdout, /status freshness 20\/s +sync every 2\.0 s/);

    assert.ok(
      results.scenarios.memory.small.peakRssBytes > 0 && results.scenarios.memory.large.peakRssBytes > 0,
    );

    const integrity = results.scenarios.integrity;
    for (const run of [integrity.plain, integrity.signatures]) {
      assert.ok(
        isRun(run) && run.rows === run.expectedRows,
        `integrity backfill measured: ${JSON.stringify(run)}`,
      );
    }
    assert.ok(
      integrity.hashCpuUsPerRecord > 0 && integrity.signatureCpuUsPerEvmRecord > integrity.hashCpuUsPerRecord,
    );
    assert.ok(integrity.signaturesVsPlain > 0 && integrity.evmShare > 0);
    assert.match(stdout, /--check-signatures ÷ sync +\d/);
    assert.match(stdout, /fetch-and-store ceiling/);

    // By key (count=100), on the same data: every figure exists, and the backfill reads by key
    // alone, below 0.02 list requests per stored record (by page numbers, ten records a request,
    // it cannot be under 0.1).
    const byKey = results.scenariosByKey;
    const perRecord = (run: { rows: number; listRequests: { key: number; page: number } }): number =>
      (run.listRequests.key + run.listRequests.page) / run.rows;
    for (const name of ['indexerSync', 'indexerWorkers', 'batchBaseline', 'httpCeiling']) {
      const run = byKey.backfill[name];
      assert.ok(isRun(run), `by key, backfill.${name} was measured: ${JSON.stringify(run)}`);
      assert.equal(run.rows, run.expectedRows, `by key, backfill.${name} row count equals the simulator's`);
      assert.equal(run.listRequests.page, 0, `by key, backfill.${name} asked no page number`);
    }
    for (const name of ['indexerSync', 'indexerWorkers']) {
      const run = byKey.backfill[name];
      assert.ok(
        perRecord(run) < 0.02,
        `by key, ${name}: ${JSON.stringify(run.listRequests)} for ${run.rows}`,
      );
      assert.ok(perRecord(backfill[name]) >= 0.1, `by page number, ${name} reads ten records a request`);
    }
    assert.ok(results.ratiosByKey.requestsPerRecord.sync < 0.02);
    for (const scenarios of [results.scenarios, byKey]) {
      assert.ok(isRun(scenarios.latency.run) && scenarios.latency.run.rowsMatch === true);
      assert.ok(isRun(scenarios.budget.run) && scenarios.budget.run.rowsMatch === true);
      assert.equal(scenarios.budget.requestsPerSecond, 50);
      assert.equal(scenarios.tail.rows, scenarios.tail.expectedRows);
    }
    assert.equal(byKey.latency.idealRowsPerSecond, (32 * 100) / 0.05);
    assert.equal(byKey.budget.idealRowsPerSecond, 50 * 100);
    assert.equal(byKey.tail.listRequests.page, 0);
    // --quick runs the status freshness by key with the sync loop only.
    assert.deepEqual(
      byKey.statusFreshness.runs.map((r: { mode: string }) => r.mode),
      ['sync'],
    );
    for (const run of byKey.statusFreshness.runs) {
      assert.ok(
        run.arrived > 0 && run.requests > 0,
        `by key, status freshness measured: ${JSON.stringify(run)}`,
      );
      assert.equal(run.packaged.changes, run.arrived);
    }
    for (const value of Object.values(results.keyVsPage)) {
      assert.ok(
        typeof value === 'number' && value > 0,
        `by key ÷ by page: ${JSON.stringify(results.keyVsPage)}`,
      );
    }
    assert.match(stdout, /backfill \d+ by key +indexer sync/);
    assert.match(stdout, /status freshness 20\/s by key +sync every 2\.0 s/);
    assert.match(stdout, /by key ÷ by page number/);

    // The mirror served: the read API under 64 clients (every answer checked), the change feed with
    // 10 then 1,000 SSE clients on one serve while tails are written.
    const serve = results.serve;
    assert.ok(
      isRun(serve.build) && serve.build.rowsMatch === true,
      `the served mirror was built: ${JSON.stringify(serve)}`,
    );
    for (const load of [serve.lists, serve.lookups]) {
      const run = load.median;
      assert.equal(run.failed, 0, `every answer passed its check: ${JSON.stringify(run.failures)}`);
      assert.ok(run.answers > 0 && run.answersPerSecond > 0 && run.latencyMs.p50 <= run.latencyMs.p99);
      assert.ok(
        run.cpu.groups.serve > 0 && run.cpu.groups.database > 0,
        `cores measured: ${JSON.stringify(run.cpu)}`,
      );
    }
    for (const run of [serve.ceiling.lists, serve.ceiling.lookups]) {
      assert.ok(
        run.answersPerSecond > 0 && run.failed === 0,
        `the ceiling was measured: ${JSON.stringify(run)}`,
      );
    }
    assert.deepEqual(
      Object.keys(serve.lists.median.byKind).sort(),
      serve.listMix.map((k: { kind: string }) => k.kind).sort(),
      'every kind of list request of the mix was asked',
    );
    assert.equal(serve.lookups.median.byKind['look-up by hash'].answers, serve.lookups.median.answers);
    assert.deepEqual(
      serve.feed.map((phase: { clients: number }) => phase.clients),
      [10, 1000],
    );
    for (const phase of serve.feed) {
      assert.equal(
        phase.completeClients,
        phase.clients,
        `every client got every event: ${JSON.stringify(phase)}`,
      );
      assert.equal(phase.events, phase.rounds * phase.recordsPerRound, 'one event a record tailed in');
      assert.ok(
        phase.commits >= phase.rounds && phase.matchedCommits === phase.commits,
        'every commit timed',
      );
      assert.ok(phase.commitToClientMs.p50 > 0 && phase.commitToClientMs.p50 <= phase.commitToClientMs.p95);
      assert.equal(phase.databaseListeners, 1, `one listener: ${JSON.stringify(phase.serveConnections)}`);
      assert.ok(phase.servePeakRssBytes > 10_000_000);
    }
    assert.match(stdout, /serve \d+ +list answers by key, 64 clients/);
    assert.match(stdout, /serve \d+ +feed, 1000 SSE clients/);

    const ratios = results.ratios;
    for (const value of [
      ratios.indexerVsBaseline.sync,
      ratios.indexerVsBaseline.workers,
      ratios.indexerVsBatchScript.sync,
      ratios.indexerVsBatchScript.workers,
      ratios.workersVsSync,
      ratios.indexerVsCopy.sync,
      ratios.indexerVsCopy.workers,
      ratios.indexerVsCeiling.sync,
      ratios.indexerVsCeiling.workers,
      ratios.syncVsPipelineCeiling,
      ratios.twiceScriptVsPipelineCeiling,
      ratios.latencyVsIdeal,
      ratios.tailPagesVsIdeal,
      ratios.peakRss1mVs100k.value,
    ]) {
      assert.equal(typeof value, 'number', `every ratio is a number: ${JSON.stringify(ratios)}`);
      assert.ok(Number.isFinite(value) && value > 0);
    }
    assert.ok(['http', 'database'].includes(ratios.indexerVsCeiling.limitedBy));
    assert.equal(results.targets.length, 14 + 11 + 8 + 8);
    for (const target of results.targets) {
      // --quick measures the workers' freshness and status freshness by page numbers only.
      if (
        /^(freshness p95|status change p95, workers|requests per arrival, workers).*, by key$/.test(
          target.name,
        )
      )
        assert.equal(target.met, null, target.name);
      else assert.equal(typeof target.met, 'boolean', `${target.name} judged`);
    }
  });
});
