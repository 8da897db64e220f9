import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from './sync-cli-run.js';

/** A demo with `dataDir` kept, no live arrivals (so the counts are exact). */
function demo(dataDir: string, seed: string, records: string) {
  return runCli(['demo', '--seed', seed, '--records', records, '--arrivals', '0'], {
    LOG_LEVEL: 'silent',
    LEDGER_INDEXER_DATA_DIR: dataDir,
  });
}

const inAll = (stdout: string): number => Number(/\((\d+) in all\)/.exec(stdout)?.[1]);

/** The last stderr line, after checking nothing else went wrong on the way. */
function failureLine(run: { code: number | null; stderr: string }): string {
  assert.equal(run.code, 1, run.stderr);
  assert.doesNotMatch(run.stderr, /\[object Object\]|^\s+at /m);
  return run.stderr.trimEnd().split('\n').at(-1) ?? '';
}

describe("demo's data folder", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-demo-folder-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts fresh on a mirror of another ledger, and syncs on from one of the same ledger', async () => {
    const folder = join(dir, 'kept');
    const first = await demo(folder, '42', '300').done;
    assert.equal(first.code, 0, first.stderr);
    assert.equal(inAll(first.stdout), 300);

    const other = await demo(folder, '99', '200').done;
    assert.equal(other.code, 0, other.stderr);
    assert.match(
      other.stderr,
      /^demo: the data folder held a mirror of another ledger \(its record rawId \d+ is not this simulator's\): starting fresh$/m,
    );
    assert.equal(inAll(other.stdout), 200, other.stdout);
    assert.match(other.stdout, /^synced 200 records/m);

    // The same seed and record count: the same ledger, synced on from where it stands.
    const again = await demo(folder, '99', '200').done;
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /starting fresh/);
    assert.match(again.stdout, /^synced 0 records/m);
    assert.equal(inAll(again.stdout), 200);

    // The same seed with another record count is another ledger too (other timestamps, other hashes).
    const resized = await demo(folder, '99', '120').done;
    assert.equal(resized.code, 0, resized.stderr);
    assert.match(resized.stderr, /starting fresh/);
    assert.equal(inAll(resized.stdout), 120);
  });

  it('says which folder it cannot write, and why', async () => {
    const locked = join(dir, 'locked');
    await mkdir(locked);
    await chmod(locked, 0o555);
    try {
      const line = failureLine(await demo(locked, '1', '50').done);
      assert.equal(
        line,
        `ledger-indexer demo: cannot write the data folder ${locked}: permission denied (EACCES); ` +
          'set LEDGER_INDEXER_DATA_DIR to a folder this user may write',
      );
    } finally {
      await chmod(locked, 0o755);
    }
  });

  it('says which folder the embedded database cannot open, and what to do', async () => {
    const broken = join(dir, 'broken');
    await mkdir(broken);
    await writeFile(join(broken, 'PG_VERSION'), 'not a PostgreSQL version\n');
    const line = failureLine(await demo(broken, '1', '50').done);
    assert.match(
      line,
      new RegExp(
        `^ledger-indexer demo: cannot open the embedded database in ${broken}: .+; the folder holds ` +
          'something other than a database this version can open: move it away, or set ' +
          'LEDGER_INDEXER_DATA_DIR to a new folder$',
      ),
    );
  });

  it('fails at once on a folder that cannot be created, such as one in /proc', async () => {
    const started = Date.now();
    const run = demo('/proc/ledger-indexer-demo', '1', '50');
    const killer = setTimeout(() => run.child.kill('SIGKILL'), 60_000);
    const result = await run.done.finally(() => clearTimeout(killer));
    assert.notEqual(result.signal, 'SIGKILL', 'it spun instead of failing');
    assert.equal(
      failureLine(result),
      'ledger-indexer demo: cannot create the data folder /proc/ledger-indexer-demo: /proc takes no new ' +
        'folders (ENOENT); set LEDGER_INDEXER_DATA_DIR to a folder this user may write',
    );
    assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
  });
});
