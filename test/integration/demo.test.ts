import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPORT_WIDTH } from '../../src/cli/demo-report.js';
import { freePort } from '../helpers/free-port.js';
import { fetchText } from '../helpers/http-surface.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from './sync-cli-run.js';

describe('demo', () => {
  it('runs the simulator, syncs into the embedded database and prints the report', async () => {
    const { code, stdout, stderr } = await runCli(['demo', '--records', '2000', '--arrivals', '20'], {
      LOG_LEVEL: 'warn',
    }).done;
    assert.equal(code, 0, stderr.slice(-1000));
    assert.match(stdout, /^synced \d+ records \(\d+ requests by key, 100 a request\) in [\d.]+s/m);
    // Which dialect, and why: the simulator answered by key when asked.
    assert.match(
      stdout,
      /^read by key \(\/txs\?cursor=…&order=asc\): the service answered by key when asked once/m,
    );
    assert.match(stdout, /^tail pass: \d+ records that arrived meanwhile/m);
    assert.match(stdout, /records by action and token \((\d+) in all\)/);
    const total = Number(/\((\d+) in all\)/.exec(stdout)?.[1]);
    assert.ok(total >= 2000, `${total} records reported`);
    assert.match(stdout, /^ACTION\s+TOKEN\s+RECORDS\s+MOVEMENTS\s+VOLUME$/m);
    assert.match(stdout, /^transfer\s+USDT\s+\d+\s+\d+\s+[\d,]+\.\d\d\s+USDT$/m);
    assert.match(stdout, /^not final yet: \d+ to re-read/m);
    assert.match(stderr, /demo: ledger simulator with 2000 records on http:\/\/127\.0\.0\.1:\d+/);
    // Not a terminal here, and still no line wider than the report's width.
    const wide = stdout.split('\n').filter((line) => line.length > REPORT_WIDTH);
    assert.deepEqual(wide, [], `lines over ${REPORT_WIDTH} columns`);
    // Bundles move their items' value (from ledger_movements): not 0 when some succeeded.
    const bundles = [...stdout.matchAll(/^bundle\s+\S+\s+(\d+)\s+(\d+)\s+(\S+)\s+\S+$/gm)];
    assert.ok(bundles.length > 0, 'bundle rows');
    const moving = bundles.filter((m) => Number(m[2]) > 0);
    assert.ok(moving.length > 0, 'successful bundles moved items');
    for (const m of moving) assert.notEqual(m[3], '0', `bundle volume: ${m[0]}`);
    assert.match(stdout, /the database keeps them exact/);
    assert.match(stdout, /demo --serve, then open\n\s+http:\/\/127\.0\.0\.1:9464\//);
  });

  it('finishes and exits 0 when the reader of its output goes away (`demo | head -1`)', async () => {
    const run = runCli(['demo', '--records', '2000', '--arrivals', '20'], { LOG_LEVEL: 'warn' });
    // The first line is read, then the pipe is closed: every later write meets a closed pipe.
    await new Promise((resolve) => run.child.stdout?.once('data', resolve));
    run.child.stdout?.destroy();
    const { code, stderr } = await run.done;
    assert.equal(code, 0, stderr.slice(-1000));
    assert.doesNotMatch(stderr, /EPIPE|Error/);
  });

  it('--serve keeps syncing and answers /health and /status until SIGTERM, then exits 0', async () => {
    const port = await freePort();
    const run = runCli(
      ['demo', '--records', '300', '--arrivals', '20', '--serve', '--http-port', String(port)],
      {
        LOG_LEVEL: 'warn',
      },
    );
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(
        'demo --serve to print its URL',
        () => (run.stdout().includes(`status page: ${base}/`) ? true : undefined),
        { timeoutMs: 90_000 },
      );
      const health = await fetchText(`${base}/health`);
      assert.equal(health.status, 200, health.body);
      assert.deepEqual(health.json, { status: 'ok' });
      const first = await fetchText(`${base}/status`);
      assert.equal(first.status, 200, first.body);
      const records = (first.json as { records: number }).records;
      assert.ok(records >= 300, `${records} records`);
      // The periodic sync picks up the records that keep arriving.
      await waitFor('a periodic sync to store more records', async () => {
        const later = await fetchText(`${base}/status`);
        return (later.json as { records: number }).records > records ? true : undefined;
      });
      run.child.kill('SIGTERM');
      const { code, stderr } = await run.done;
      assert.equal(code, 0, stderr.slice(-1000));
      await assert.rejects(fetch(`${base}/health`), 'no longer listening');
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });

  it('refuses --http-port without --serve', async () => {
    const { code, stderr } = await runCli(['demo', '--http-port', '9999'], { LOG_LEVEL: 'silent' }).done;
    assert.equal(code, 2);
    assert.match(stderr, /^ledger-indexer demo: --http-port needs --serve$/m);
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
