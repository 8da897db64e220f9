import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/logger.js';

const SECRET = 's3cr3t-pw-XYZ';

/** The JSON lines `write` logs through the project's logger. */
function logged(write: (logger: ReturnType<typeof createLogger>) => void): Record<string, unknown>[] {
  const dir = mkdtempSync(join(tmpdir(), 'logger-'));
  const path = join(dir, 'log');
  const fd = openSync(path, 'w');
  try {
    write(createLogger({ destination: fd }));
  } finally {
    closeSync(fd);
  }
  const text = readFileSync(path, 'utf8');
  rmSync(dir, { recursive: true });
  assert.ok(!text.includes(SECRET), `the secret was logged:\n${text}`);
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** An error as ioredis raises it when Redis refuses HELLO/AUTH: the command, password included, attached. */
function redisAuthError(): Error {
  const error = new Error('WRONGPASS invalid username-password pair') as Error & { command?: unknown };
  error.command = { name: 'hello', args: ['3', 'AUTH', 'default', SECRET] };
  return error;
}

describe('the logger', () => {
  it('serializes errors without the Redis command they carry, as err, error, cause or aggregate', () => {
    type Serialized = { message: string; command?: unknown; aggregateErrors?: unknown[] };
    const lines = logged((logger) => {
      logger.warn({ err: redisAuthError() }, 'plain');
      logger.warn({ error: redisAuthError() }, 'named');
      logger.warn({ err: new Error('outer', { cause: redisAuthError() }) }, 'caused');
      logger.warn({ err: new AggregateError([redisAuthError()], 'many') }, 'aggregate');
    });
    const [plain, named, caused, aggregate] = lines.map((line) => (line.err ?? line.error) as Serialized);
    assert.equal(plain?.message, 'WRONGPASS invalid username-password pair');
    assert.equal(plain?.command, undefined);
    assert.ok(named && !('command' in named));
    assert.match(caused?.message ?? '', /WRONGPASS/);
    assert.equal(aggregate?.aggregateErrors?.length, 1);
  });

  it('censors command arguments and masks the password of URL-valued keys, nested ones too', () => {
    const [line] = logged((logger) =>
      logger.info(
        {
          command: { name: 'auth', args: [SECRET] },
          redis_url: `redis://default:${SECRET}@h:6379`,
          target: { url: `http://u:${SECRET}@h/`, base_url: new URL(`http://u:${SECRET}@h/`) },
        },
        'x',
      ),
    );
    assert.deepEqual(line?.command, { name: 'auth', args: '***' });
    assert.equal(line?.redis_url, 'redis://default:***@h:6379');
    assert.deepEqual(line?.target, { url: 'http://u:***@h/', base_url: 'http://u:***@h/' });
  });

  it("masks the NATS destination's password and token, in a config object too", () => {
    const [line] = logged((logger) =>
      logger.info(
        {
          nats_url: `nats://feed:${SECRET}@h:4222`,
          config: { natsUrl: `nats://feed:${SECRET}@h:4222`, natsToken: SECRET, natsStream: 'LEDGER_FEED' },
        },
        'x',
      ),
    );
    assert.equal(line?.nats_url, 'nats://feed:***@h:4222');
    assert.deepEqual(line?.config, {
      natsUrl: 'nats://feed:***@h:4222',
      natsToken: '***',
      natsStream: 'LEDGER_FEED',
    });
  });
});
