import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from './sync-cli-run.js';

describe('demo', () => {
  it('runs the simulator, syncs into the embedded database and prints the report', async () => {
    const { code, stdout, stderr } = await runCli(['demo', '--records', '2000', '--arrivals', '20'], {
      LOG_LEVEL: 'warn',
    }).done;
    assert.equal(code, 0, stderr.slice(-1000));
    assert.match(stdout, /^synced \d+ records \(\d+ pages\) in [\d.]+s/m);
    assert.match(stdout, /^tail pass: \d+ records that arrived meanwhile/m);
    assert.match(stdout, /records by action and token \((\d+) in all\)/);
    const total = Number(/\((\d+) in all\)/.exec(stdout)?.[1]);
    assert.ok(total >= 2000, `${total} records reported`);
    assert.match(stdout, /ACTION\s+TOKEN\s+RECORDS\s+VOLUME/);
    assert.match(stdout, /^transfer\s+USDT .*\d USDT$/m);
    assert.match(stdout, /^not final yet: \d+ waiting for a re-read/m);
    assert.match(stderr, /demo: ledger simulator with 2000 records on http:\/\/127\.0\.0\.1:\d+/);
  });

  it('ends with one line naming the command when its database cannot be opened', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledger-demo-bad-'));
    try {
      // A file where the database folder should be: the embedded database cannot start there.
      const notAFolder = join(dir, 'plain-file');
      await writeFile(notAFolder, 'not a folder');
      const { code, stderr } = await runCli(['demo', '--records', '100', '--arrivals', '0'], {
        LOG_LEVEL: 'silent',
        LEDGER_INDEXER_DATA_DIR: notAFolder,
      }).done;
      assert.equal(code, 1, stderr);
      const lines = stderr.trimEnd().split('\n');
      assert.match(lines.at(-1) ?? '', /^ledger-indexer demo: \S/, stderr);
      assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
