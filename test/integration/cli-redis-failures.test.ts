/**
 * The Redis commands (`worker`, `schedule`, `status`) when Redis refuses the credentials, cannot
 * be reached, or goes away: each ends with one clear line, never prints the password, and obeys
 * SIGTERM. Run as real processes against private Redis servers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { type PrivateRedis, startPrivateRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';
import { type CliRun, runCli } from './sync-cli-run.js';

const PASSWORD = 's3cr3t-pw-XYZ';
/** From start to exit, for commands that must give up on their own (process start-up included). */
const GIVE_UP_BOUND_MS = 45_000;
/** From SIGTERM to exit. */
const SIGNAL_BOUND_MS = 9_000;

let guarded: PrivateRedis;
let testDb: TestDatabase;
let env: Record<string, string>;

before(async () => {
  guarded = await startPrivateRedis({ args: ['--requirepass', 'the-right-password'] });
  testDb = await createTestDatabase();
  env = {
    DATABASE_URL: testDb.url,
    LEDGER_BASE_URL: `http://127.0.0.1:${await freePort()}`,
    LOG_LEVEL: 'info',
  };
});

after(async () => {
  await guarded.stop();
  await testDb.drop();
});

type Exit = Awaited<CliRun['done']>;

/** The run's exit, or a failure (and the process killed) when it takes longer than `ms`. */
async function exitWithin(run: CliRun, ms: number, what: string): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`${what} still running after ${ms} ms:\n${run.stderr().slice(-1500)}`));
    }, ms);
  });
  try {
    return await Promise.race([run.done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** stderr without the JSON log lines: what a person reads. */
function plainLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{'));
}

function assertNoPassword(exit: Exit): void {
  assert.ok(!exit.stdout.includes(PASSWORD), `password on stdout:\n${exit.stdout}`);
  assert.ok(!exit.stderr.includes(PASSWORD), `password on stderr:\n${exit.stderr.slice(0, 3000)}`);
}

describe('Redis refusing the credentials of REDIS_URL', { concurrency: true }, () => {
  const wrongUrl = () => guarded.url.replace('redis://', `redis://default:${PASSWORD}@`);

  for (const name of ['worker', 'schedule', 'status']) {
    it(`${name} exits 1 with one line naming REDIS_URL, the password printed nowhere`, async () => {
      const exit = await exitWithin(
        runCli([name], { ...env, REDIS_URL: wrongUrl() }),
        GIVE_UP_BOUND_MS,
        name,
      );
      assertNoPassword(exit);
      assert.equal(exit.code, 1, exit.stderr.slice(-2000));
      const lines = plainLines(exit.stderr);
      assert.equal(lines.length, 1, exit.stderr.slice(-2000));
      assert.match(
        lines[0]!,
        new RegExp(
          `^ledger-indexer ${name}: Redis refused the credentials of REDIS_URL \\(redis://default:\\*\\*\\*@127\\.0\\.0\\.1:\\d+\\)$`,
        ),
      );
      const logLines = exit.stderr.split('\n').filter((line) => line.startsWith('{'));
      assert.ok(logLines.length <= 10, `a handful of log lines, not a flood: ${logLines.length}`);
    });
  }
});

describe('Redis unreachable', () => {
  for (const name of ['schedule', 'status']) {
    it(`${name} gives up after a few attempts with exit 1 and one line`, async () => {
      const url = `redis://127.0.0.1:${await freePort()}`;
      const exit = await exitWithin(runCli([name], { ...env, REDIS_URL: url }), GIVE_UP_BOUND_MS, name);
      assert.equal(exit.code, 1, exit.stderr.slice(-2000));
      const lines = plainLines(exit.stderr);
      assert.equal(lines.length, 1, exit.stderr.slice(-2000));
      assert.match(
        lines[0]!,
        new RegExp(`^ledger-indexer ${name}: Redis at REDIS_URL \\(${url}\\) is unreachable: .*ECONNREFUSED`),
      );
    });
  }

  it('worker keeps retrying, logs it without a flood, and exits 0 soon after SIGTERM', async () => {
    const run = runCli(['worker'], { ...env, REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    await waitFor('the worker to try Redis', () => /redis connection error/.test(run.stderr()), {
      timeoutMs: 40_000,
    });
    run.child.kill('SIGTERM');
    const exit = await exitWithin(run, SIGNAL_BOUND_MS, 'worker after SIGTERM');
    assert.equal(exit.code, 0, exit.stderr.slice(-2000));
    assert.match(exit.stderr, /"msg":"worker stopped"/);
    assert.deepEqual(plainLines(exit.stderr), []);
  });

  it('worker whose Redis went away exits 0 soon after SIGTERM', async () => {
    const redis = await startPrivateRedis();
    try {
      const run = runCli(['worker'], { ...env, REDIS_URL: redis.url });
      await waitFor('the worker to be ready', () => /"msg":"worker ready"/.test(run.stderr()), {
        timeoutMs: 40_000,
      });
      await redis.stop();
      await waitFor('the worker to notice', () => /redis connection error/.test(run.stderr()), {
        timeoutMs: 20_000,
      });
      run.child.kill('SIGTERM');
      const exit = await exitWithin(run, SIGNAL_BOUND_MS, 'worker after SIGTERM');
      assert.equal(exit.code, 0, exit.stderr.slice(-2000));
      assert.match(exit.stderr, /"msg":"worker stopped"/);
    } finally {
      await redis.stop();
    }
  });
});
