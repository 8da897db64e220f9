import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { waitFor } from '../helpers/wait-for.js';
import { readNextPage, runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

let simulator: Simulator;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  // Page numbers: these runs are judged by their pages and page checkpoints (by key: sync-key-dialect).
  simulator = createSimulator({ records: 3000, seed: 31, paging: 'page', faults: { latencyMs: 10 } });
  const { url } = await simulator.listen();
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_CONCURRENCY: '2',
    LEDGER_RETRIES: '2',
    LEDGER_RETRY_MIN_MS: '20',
    LEDGER_RETRY_MAX_MS: '50',
    LOG_LEVEL: 'silent',
  };
});

after(async () => {
  await simulator.close();
  await testDb.drop();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('sync and status on the command line', () => {
  it('exits 2 naming --base-url when no service is configured', async () => {
    const { code, stderr } = await runCli(['sync'], { DATABASE_URL: testDb.url }).done;
    assert.equal(code, 2);
    assert.equal(stderr.trim().split('\n').length, 1);
    assert.match(stderr, /--base-url.*LEDGER_BASE_URL/);
  });

  it('exits 2 naming a bad flag or setting', async () => {
    const flag = await runCli(['sync', '--bogus'], env).done;
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /--bogus/);
    const setting = await runCli(['sync'], { ...env, LEDGER_CONCURRENCY: 'many' }).done;
    assert.equal(setting.code, 2);
    assert.match(setting.stderr, /LEDGER_CONCURRENCY/);
  });

  it('says which variable of ours is no setting, and the one meant', async () => {
    // Without the line, the mirror would go to the embedded database without a word.
    const { code, stderr } = await runCli(['sync'], {
      DATABASE_URL: testDb.url,
      LEDGER_BASE_URL_TYPO: 'x',
      LEDGER_CONCURENCY: '8',
    }).done;
    assert.equal(code, 2);
    const lines = stderr.trim().split('\n');
    assert.deepEqual(lines.slice(0, 2), [
      'ledger-indexer sync: LEDGER_BASE_URL_TYPO is not a setting and is ignored',
      'ledger-indexer sync: LEDGER_CONCURENCY is not a setting and is ignored (did you mean LEDGER_CONCURRENCY?)',
    ]);
    assert.match(lines[2]!, /--base-url.*LEDGER_BASE_URL/);
  });

  it('exits 1 with one clear line when the service is down', async () => {
    const port = await freePort();
    const { code, stderr } = await runCli(['sync', '--base-url', `http://127.0.0.1:${port}`], env).done;
    assert.equal(code, 1);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, /^ledger-indexer sync: the ledger service failed: .*checkpoints kept/);
  });

  it('stops on SIGINT after the page in flight with exit 130, and a rerun finishes the job', async () => {
    // One writer: the first backfill is the walk, whose checkpoint is kept.
    const run = runCli(['sync'], { ...env, LEDGER_WRITERS: '1' });
    await waitFor('the walk to begin', async () => ((await readNextPage(testDb.database)) ?? 0) >= 5);
    run.child.kill('SIGINT');
    const stopped = await run.done;
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stdout, /stopped mid-walk/);
    const checkpoint = await readNextPage(testDb.database);
    assert.ok(checkpoint !== null && checkpoint >= 5, `checkpoint kept at page ${checkpoint}`);

    const rerun = await runCli(['sync'], env).done;
    assert.equal(rerun.code, 0, rerun.stderr);
    await assertMirrorsTruth(testDb.database.db, simulator);
  });

  it('fails with exit 1 and the checkpoint intact while the service answers errors, then resumes', async () => {
    simulator.addRecords(400);
    simulator.settleAll();
    // One writer: `--full` is the walk, whose checkpoint is kept (with more, a repair in lanes).
    const run = runCli(['sync', '--full'], { ...env, LEDGER_WRITERS: '1' });
    await waitFor(
      'the full walk to pass page 20',
      async () => ((await readNextPage(testDb.database)) ?? 0) >= 20,
    );
    simulator.setFaults({ errorRate: 1 });
    const failed = await run.done;
    simulator.setFaults({ errorRate: 0 });
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /HTTP 50[03]/);
    const checkpoint = await readNextPage(testDb.database);
    assert.ok(checkpoint !== null && checkpoint >= 20, `checkpoint kept at page ${checkpoint}`);

    const before = simulator.stats()['GET /txs']?.['200'] ?? 0;
    const ok = await runCli(['sync'], env).done;
    assert.equal(ok.code, 0, ok.stderr);
    const fetched = (simulator.stats()['GET /txs']?.['200'] ?? 0) - before;
    const totalPages = Math.ceil(simulator.count() / 10);
    assert.ok(
      fetched > 0 && fetched <= totalPages - checkpoint + 20,
      `resumed at the checkpoint (${fetched} pages fetched)`,
    );
    await assertMirrorsTruth(testDb.database.db, simulator);
  });

  it('gives what it wrote its feed positions before it exits, and lets the retention delete old events', async () => {
    // No feed server runs beside these runs: only `sync` itself can stamp.
    const feedCounts = async () => {
      const [row] = await queryRows<{
        unstamped: number;
        events: number;
        top: string | null;
        horizon: string;
      }>(
        testDb.database.db,
        sql`SELECT (SELECT count(*) FROM ledger_feed_transactions WHERE last_position IS NULL)::int AS unstamped,
          (SELECT count(*) FROM ledger_feed_events)::int AS events,
          (SELECT max(last_position)::text FROM ledger_feed_transactions) AS top,
          (SELECT retained_after::text FROM ledger_feed_horizon) AS horizon`,
      );
      return row!;
    };
    const stamped = await feedCounts();
    assert.equal(stamped.unstamped, 0, 'every transaction of the earlier runs stamped');
    assert.ok(stamped.events >= simulator.count(), `an event for each record stored (${stamped.events})`);
    assert.equal(Number(stamped.top) - Number(stamped.horizon), stamped.events, 'positions without holes');

    await testDb.database.db.execute(
      sql`UPDATE ledger_feed_transactions SET stamped_at = now() - interval '2 days'`,
    );
    simulator.addRecords(25);
    const run = await runCli(['sync'], { ...env, LEDGER_FEED_RETENTION: '1d' }).done;
    assert.equal(run.code, 0, run.stderr);
    const after = await feedCounts();
    assert.equal(after.unstamped, 0);
    assert.equal(after.horizon, stamped.top, 'the events older than a day deleted, the horizon at their end');
    assert.equal(after.events, Number(after.top) - Number(after.horizon), 'only the new run’s events kept');
    assert.ok(after.events >= 25, `the 25 new records' events (${after.events})`);
  });

  it('status --json reports the stream, its lag and the backlog', async () => {
    const { code, stdout } = await runCli(['status', '--json'], env).done;
    assert.equal(code, 0);
    const status = JSON.parse(stdout) as {
      streams: Array<{
        key: string;
        watermark: number;
        lagRawIds: number;
        errorStreak: number;
        walk: unknown;
        nonFinal: number;
        rejected: number;
      }>;
      records: number;
      nonFinal: { queued: number };
    };
    const stream = status.streams.find((s) => s.key === 'txs');
    assert.ok(stream);
    assert.equal(stream.watermark, simulator.headRawId());
    assert.equal(stream.lagRawIds, 0);
    assert.equal(stream.errorStreak, 0);
    assert.equal(stream.walk, null);
    assert.equal(stream.nonFinal, status.nonFinal.queued, 'the global stream holds every non-final record');
    assert.equal(stream.rejected, 0);
    assert.equal(status.records, simulator.count());
    const table = await runCli(['status'], env).done;
    assert.equal(table.code, 0);
    assert.match(table.stdout, /STREAM\s+WATERMARK/);
    assert.match(table.stdout, /non-final: \d+ waiting/);
  });
});
