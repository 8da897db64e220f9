/**
 * Two `sync` runs over one embedded database at once, as a schedule whose run outlasts its
 * interval starts them: the second must not open the folder (two processes writing PGlite's files
 * lose each other's commits), and the first ends equal to the service.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/connect.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

const RECORDS = 6_000;

describe('overlapping sync runs on the embedded database', () => {
  let simulator: Simulator;
  let url: string;
  let dataDir: string;
  before(async () => {
    simulator = createSimulator({ records: RECORDS, seed: 17, arrivalsPerSecond: 0 });
    simulator.settleAll();
    ({ url } = await simulator.listen());
    dataDir = await mkdtemp(join(tmpdir(), 'ledger-indexer-overlap-'));
  });
  after(async () => {
    await simulator.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses the second run while the first holds the folder, and loses nothing', async () => {
    const env = { LOG_LEVEL: 'warn', LEDGER_INDEXER_DATA_DIR: dataDir, LEDGER_REQUESTS_PER_SECOND: '0' };
    const args = ['sync', '--base-url', url, '--paging', 'key'];
    const first = runCli(args, env);
    await waitFor(
      'the first run to commit records',
      () => /backfill by key, request \d+/.test(first.stderr()),
      {
        timeoutMs: 60_000,
      },
    );
    // Slow answers keep the first run going while the second starts.
    simulator.setFaults({ latencyMs: 400 });
    const second = await runCli(args, env).done;
    simulator.setFaults({ latencyMs: 0 });
    assert.equal(second.code, 1, second.stderr.slice(-800));
    assert.match(
      second.stderr,
      new RegExp(
        `ledger-indexer sync: the embedded database in .* is open in another process, ledger-indexer sync \\(pid ${first.child.pid}, since [^)]+\\): one process at a time may open it`,
      ),
    );
    const done = await first.done;
    assert.equal(done.code, 0, done.stderr.slice(-800));
    assert.match(done.stdout, /up to date/);

    const database = await openDatabase({ dataDir });
    try {
      await assertMirrorsTruth(database.db, simulator);
    } finally {
      await database.close();
    }
    // The first run let go of the folder: the next one opens it.
    const next = await runCli(args, env).done;
    assert.equal(next.code, 0, next.stderr.slice(-800));
  });
});
