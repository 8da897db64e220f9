import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { parseFlags } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';
import { UsageError } from '../../src/errors.js';

/** Runs the command line in-process; no service, database or Redis is reached by these cases. */
async function run(argv: string[], env: Record<string, string> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await main(argv, { env, stdout, stderr, signal: new AbortController().signal });
  return { code, stdout: out, stderr: err };
}

/** Settings that get `worker` past its configuration checks to its flags. */
const WORKER_ENV = {
  LEDGER_BASE_URL: 'http://127.0.0.1:1',
  REDIS_URL: 'redis://127.0.0.1:1',
  LOG_LEVEL: 'silent',
};

describe('flag errors on the command line', () => {
  it('names what is wrong with a negative-looking --every instead of calling it ambiguous', async () => {
    for (const argv of [
      ['schedule', '--every', '-5s'],
      ['schedule', '--every=-5s'],
    ]) {
      const { code, stderr } = await run(argv);
      assert.equal(code, 2);
      assert.equal(
        stderr,
        "ledger-indexer schedule: --every must be a duration like 30s, 5m or 1h (got '-5s')\n",
      );
    }
    const missing = await run(['schedule', '--every', '--global']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, 'ledger-indexer schedule: --every needs a value\n');
  });

  it('refuses an --every above a week', async () => {
    const { code, stderr } = await run(['schedule', '--every', '100000h']);
    assert.equal(code, 2);
    assert.match(stderr, /--every must be at most 168h/);
  });

  it('exits 2 for every bad worker flag, naming it and its range', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--concurrency', '0'], /--concurrency must be a whole number from 1 to 256 \(got '0'\)/],
      [['--concurrency', '1000000000'], /--concurrency must be a whole number from 1 to 256/],
      [['--concurrency', '-3'], /--concurrency must be a whole number from 1 to 256 \(got '-3'\)/],
      [['--lock-ms', '10'], /--lock-ms must be a whole number from 1000 to 3600000/],
      [['--lease-ms', '99999999999'], /--lease-ms must be a whole number from 1000 to 3600000/],
      [['--pages-per-range', '0'], /--pages-per-range must be a whole number from 1 to 10000/],
    ];
    for (const [flags, message] of cases) {
      const { code, stderr } = await run(['worker', ...flags], WORKER_ENV);
      assert.equal(code, 2, `worker ${flags.join(' ')}: ${stderr}`);
      assert.match(stderr, message);
      assert.equal(stderr.trim().split('\n').length, 1);
    }
  });

  it('exits 2 with one line naming --http-port or LEDGER_HTTP_PORT when the port is bad', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [
        ['worker', '--http-port', '70000'],
        {},
        /^ledger-indexer worker: --http-port: must be a whole number from 0 to 65535 \(got '70000'\)$/,
      ],
      [
        ['worker', '--http-port', 'abc'],
        {},
        /^ledger-indexer worker: --http-port: must be a whole number from 0 to 65535 \(got 'abc'\)$/,
      ],
      [
        ['worker'],
        { LEDGER_HTTP_PORT: '-1' },
        /^ledger-indexer worker: LEDGER_HTTP_PORT: must be a whole number/,
      ],
      [
        ['serve', '--http-port', '99999'],
        {},
        /^ledger-indexer serve: --http-port: must be a whole number from 0 to 65535/,
      ],
      [
        ['serve', '--http-port', '0'],
        {},
        /^ledger-indexer serve: --http-port: must be a port from 1 to 65535 for serve/,
      ],
      [
        ['serve'],
        { LEDGER_HTTP_HOST: 'http://x/' },
        /^ledger-indexer serve: LEDGER_HTTP_HOST: must be a host name or an IP address/,
      ],
      [['serve', '--http-port', '9464'], {}, /^ledger-indexer serve: DATABASE_URL: is required by serve/],
    ];
    for (const [argv, env, message] of cases) {
      const { code, stderr } = await run(argv, { ...WORKER_ENV, ...env });
      assert.equal(code, 2, `${argv.join(' ')}: ${stderr}`);
      assert.equal(stderr.split('\n').length, 2, stderr);
      assert.match(stderr.trim(), message);
    }
  });

  it('exits 2 with one line naming --paging, --count or --list-url on sync, worker and verify', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['sync', '--paging', 'cursor'], /^ledger-indexer sync: --paging: must be one of auto, key, page/],
      [['sync', '--count', '5'], /^ledger-indexer sync: --count: must be a whole number from 10 to 1000/],
      [
        ['worker', '--count', '1001'],
        /^ledger-indexer worker: --count: must be a whole number from 10 to 1000/,
      ],
      [
        ['worker', '--list-url', 'ftp://x'],
        /^ledger-indexer worker: --list-url: must start with http:\/\/ or https:\/\//,
      ],
      [['verify', '--paging', 'both'], /^ledger-indexer verify: --paging: must be one of auto, key, page/],
      [['verify', '--list-url', 'nope'], /^ledger-indexer verify: --list-url: is not a valid URL/],
    ];
    for (const [argv, message] of cases) {
      const { code, stderr } = await run(argv, WORKER_ENV);
      assert.equal(code, 2, `${argv.join(' ')}: ${stderr}`);
      assert.equal(stderr.split('\n').length, 2, stderr);
      assert.match(stderr, message);
    }
  });

  it('bounds the numeric flags of simulate and demo', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['simulate', '--records', '1000000000'], /--records must be a whole number from 0 to 20000000/],
      [['simulate', '--port', '70000'], /--port must be a whole number from 0 to 65535/],
      [['simulate', '--latency-ms', '1e9'], /--latency-ms must be a number between 0 and 600000/],
      [['simulate', '--arrivals', '-1'], /--arrivals must be a number between 0 and 100000 \(got '-1'\)/],
      [['simulate', '--late-rate', '1.5'], /--late-rate must be a number between 0 and 1 \(got '1.5'\)/],
      [['simulate', '--late-rate', 'some'], /--late-rate must be a number between 0 and 1/],
      [['simulate', '--late-ms', '-5'], /--late-ms must be a whole number from 0 to 86400000 \(got '-5'\)/],
      [['simulate', '--late-ms', '1.5'], /--late-ms must be a whole number from 0 to 86400000/],
      [['demo', '--records', '5000000'], /--records must be a whole number from 1 to 1000000/],
      [['verify', '--base-url', 'http://127.0.0.1:1', '--walk-limit', '1000000000'], /--walk-limit must be/],
    ];
    for (const [argv, message] of cases) {
      const { code, stderr } = await run(argv, { LOG_LEVEL: 'silent' });
      assert.equal(code, 2, `${argv.join(' ')}: ${stderr}`);
      assert.match(stderr, message);
    }
  });

  it('exits 2 with one line naming a bad paging flag of simulate', async () => {
    const cases: Array<[string[], string]> = [
      [['--paging', 'keys'], "--paging must be one of page, key, both (got 'keys')"],
      [['--paging', ''], "--paging must be one of page, key, both (got '')"],
      [['--max-count', '-1'], "--max-count must be a whole number from 0 to 1000000 (got '-1')"],
      [['--max-count', '1e3'], "--max-count must be a whole number from 0 to 1000000 (got '1e3')"],
      [
        ['--refuse-count-above', '1000001'],
        "--refuse-count-above must be a whole number from 0 to 1000000 (got '1000001')",
      ],
    ];
    for (const [flags, message] of cases) {
      const { code, stdout, stderr } = await run(['simulate', ...flags], { LOG_LEVEL: 'silent' });
      assert.equal(code, 2, `${flags.join(' ')}: ${stderr}`);
      assert.equal(stdout, '');
      assert.equal(stderr, `ledger-indexer simulate: ${message}\n`);
    }
  });

  it('exits 2 naming a setting above its maximum', async () => {
    const { code, stderr } = await run(['sync', '--base-url', 'http://127.0.0.1:1'], {
      LEDGER_CONCURRENCY: '1000000000',
    });
    assert.equal(code, 2);
    assert.equal(
      stderr,
      "ledger-indexer sync: LEDGER_CONCURRENCY: must be a whole number from 1 to 256 (got '1000000000')\n",
    );
  });
});

describe('parseFlags', () => {
  const options = {
    every: { type: 'string' },
    account: { type: 'string', multiple: true },
    full: { type: 'boolean' },
  } as const;

  it('takes a value starting with a dash as the value of a string option', () => {
    const { values } = parseFlags(['--account', '-abc', '--every', '-1', '--full'], options);
    assert.deepEqual({ ...values }, { account: ['-abc'], every: '-1', full: true });
  });

  it('names a missing value and an unknown flag in one line', () => {
    assert.throws(
      () => parseFlags(['--every'], options),
      (e: unknown) => e instanceof UsageError && e.message === '--every needs a value',
    );
    assert.throws(
      () => parseFlags(['--bogus'], options),
      (e: unknown) => e instanceof UsageError && /--bogus/.test(e.message),
    );
  });
});
