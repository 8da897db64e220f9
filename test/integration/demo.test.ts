import assert from 'node:assert/strict';
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
});
