import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/connect.js';
import { listStreams } from '../../src/db/queries/stream-queries.js';
import { createSimulator } from '../../src/simulator/index.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

const RECORDS = 4_000;

describe('demo in a kept folder', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ledger-indexer-demo-takeover-'));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Runs `fn` on the demo's embedded database, opened while no demo runs. */
  async function inFolder<T>(
    fn: (database: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>,
  ): Promise<T> {
    const database = await openDatabase({ dataDir });
    try {
      return await fn(database);
    } finally {
      await database.close();
    }
  }

  it('takes over at once from a demo killed mid-backfill, and ends equal to the service', async () => {
    const args = ['demo', '--records', String(RECORDS), '--arrivals', '0'];
    const env = { LOG_LEVEL: 'warn', LEDGER_INDEXER_DATA_DIR: dataDir };
    const killed = runCli(args, env);
    await waitFor(
      'the first demo to commit records',
      () => /txs backfill by key, request \d+/.test(killed.stderr()),
      {
        timeoutMs: 90_000,
      },
    );
    killed.child.kill('SIGKILL');
    const outcome = await killed.done;
    assert.equal(outcome.signal, 'SIGKILL');
    assert.doesNotMatch(outcome.stdout, /^synced/m, 'killed before its backfill ended');
    const left = await inFolder(async (database) => (await listStreams(database.db))[0]?.leaseOwner);
    assert.match(
      left ?? '',
      new RegExp(`^sync:[^:]+:${killed.child.pid}:`),
      'the killed demo left its lease',
    );

    const next = await runCli(args, env).done;
    assert.equal(next.code, 0, next.stderr.slice(-800));
    assert.match(next.stdout, /^synced \d+ records/m);
    assert.match(next.stdout, /records by action and token \(\d+ in all\)/);
    await inFolder(async (database) => {
      assert.equal((await listStreams(database.db))[0]?.leaseOwner, null, 'the lease is released at the end');
      await assertMirrorsTruth(database.db, createSimulator({ records: RECORDS, seed: 1 }));
    });
  });
});
