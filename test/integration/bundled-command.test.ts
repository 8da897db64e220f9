/**
 * The command as installed: `npm run build` bundles src/cli/bin.ts and workers/main.ts into
 * dist/cli (package.json's `bin`, the image's entry point). The other tests run dist/cli as
 * `test/run.mjs` bundled it; these build the bundle afresh into a folder of their own and run
 * real jobs with it, so a dependency that breaks when bundled (a file it loads beside itself, a
 * native addon, a CommonJS global) fails here rather than on a user's machine.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { packageRoot } from '../../src/paths.js';
import { createSimulator } from '../../src/simulator/index.js';
import { createTestDatabase } from '../helpers/database.js';
import { setUp, syncToTruth } from '../helpers/redis.js';
import { runCli } from './sync-cli-run.js';

const outdir = join('dist', `cli-test-${process.pid}`);
const entry = [join(outdir, 'ledger-indexer.js')];

describe('the bundled command (dist/cli)', () => {
  before(() => {
    // The build's own bundle step, into this file's folder: `--outdir` given last wins.
    const built = spawnSync('npm', ['run', '--silent', 'bundle', '--', `--outdir=${outdir}`], {
      cwd: packageRoot,
      encoding: 'utf8',
    });
    assert.equal(built.status, 0, built.stderr);
  });
  after(() => rmSync(join(packageRoot, outdir), { recursive: true, force: true }));

  it('is what package.json installs as ledger-indexer, and prints its version', async () => {
    const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
      version: string;
      bin: Record<string, string>;
    };
    assert.equal(pkg.bin['ledger-indexer'], 'dist/cli/ledger-indexer.js');
    const { code, stdout } = await runCli(['--version'], {}, entry).done;
    assert.equal(code, 0);
    assert.equal(stdout.trim(), pkg.version);
  });

  it('runs as the installed command does, through its first line and the node flags it names', () => {
    const run = spawnSync(join(packageRoot, entry[0]!), ['--version'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      readFileSync(join(packageRoot, entry[0]!), 'utf8'),
      /^#!\/usr\/bin\/env -S node --max-semi-space-size=\d+\n/,
    );
  });

  it('syncs the simulator into PostgreSQL: every record, once', async () => {
    const db = await createTestDatabase();
    const sim = createSimulator({ records: 700, seed: 8, holeRate: 0.05, arrivalsPerSecond: 0 });
    try {
      const { url } = await sim.listen();
      const env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'warn' };
      const { code, stderr } = await runCli(['sync'], env, entry).done;
      assert.equal(code, 0, stderr.slice(-2000));
      const rows = await queryRows<{ id: string }>(
        db.database.db,
        sql`SELECT raw_id::text AS id FROM ledger_transactions ORDER BY raw_id`,
      );
      const truth = [...sim.records()].map((r) => r.rawId).sort((a, b) => a - b);
      assert.deepEqual(
        rows.map((r) => Number(r.id)),
        truth,
      );
    } finally {
      await sim.close();
      await db.drop();
    }
  });

  it('runs the workers: range jobs on Redis backfill every record, then a tail, then a drain', async () => {
    const setup = await setUp(
      'bundled-command',
      { records: 500, seed: 9, holeRate: 0.05, arrivalsPerSecond: 20 },
      { entry },
    );
    try {
      const worker = setup.start();
      await worker.ready;
      await syncToTruth(setup, 60_000);
      worker.child.kill('SIGTERM');
      assert.deepEqual(await worker.exited, { code: 0, signal: null });
    } finally {
      await setup.close();
    }
  });

  it('has the worker entry point of images and process managers', async () => {
    const { code, stdout } = await runCli(['--help'], {}, [join(outdir, 'worker.js')]).done;
    assert.equal(code, 0);
    assert.match(stdout, /^Usage: ledger-indexer worker/m);
  });

  it('runs the demo on the embedded database', async () => {
    const { code, stdout, stderr } = await runCli(
      ['demo', '--records', '300', '--arrivals', '0'],
      { LOG_LEVEL: 'warn' },
      entry,
    ).done;
    assert.equal(code, 0, stderr.slice(-2000));
    assert.match(stdout, /^synced 300 records \(3 requests by key, 100 a request\) in [\d.]+s/m);
  });
});
