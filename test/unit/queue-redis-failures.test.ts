import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReplyError } from 'ioredis';
import { RedisAuthError, RedisUnavailableError } from '../../src/errors.js';
import {
  createFailureLimiter,
  credentialProblem,
  describeRedisFailure,
  redisFailureLine,
} from '../../src/queue/redis-failures.js';

const URL_WITH_SECRET = 'redis://default:s3cr3t-pw-XYZ@127.0.0.1:6390';

/** A WRONGPASS reply the way ioredis delivers it: with the HELLO command and its password attached. */
function wrongPass(): Error {
  const error = new ReplyError('WRONGPASS invalid username-password pair or user is disabled.') as Error & {
    command?: unknown;
  };
  error.command = { name: 'hello', args: ['3', 'AUTH', 'default', 's3cr3t-pw-XYZ'] };
  return error;
}

describe('credentialProblem', () => {
  it('reads the kind of a Redis error reply: WRONGPASS refused, NOAUTH missing', () => {
    assert.equal(credentialProblem(wrongPass()), 'refused');
    assert.equal(credentialProblem(new ReplyError('NOAUTH Authentication required.')), 'missing');
  });

  it('is null for replies of other kinds and for errors that are not replies', () => {
    assert.equal(credentialProblem(new ReplyError('ERR unknown command')), null);
    assert.equal(credentialProblem(new Error('WRONGPASS look-alike text')), null);
    assert.equal(credentialProblem('WRONGPASS'), null);
  });
});

describe('describeRedisFailure', () => {
  it('keeps the first line of the message and never the command with its arguments', () => {
    const text = describeRedisFailure(wrongPass(), URL_WITH_SECRET);
    assert.equal(text, 'WRONGPASS invalid username-password pair or user is disabled.');
  });

  it('masks the password of the URL and of any URL wherever a message repeats it', () => {
    const error = new Error('cannot use redis://default:s3cr3t-pw-XYZ@127.0.0.1:6390 (s3cr3t-pw-XYZ)\nat …');
    const text = describeRedisFailure(error, URL_WITH_SECRET);
    assert.equal(text, 'cannot use redis://default:***@127.0.0.1:6390 (***)');
    assert.equal(
      describeRedisFailure(new Error('see rediss://u:other@host:1'), 'redis://h:1'),
      'see rediss://u:***@host:1',
    );
  });
});

describe('redisFailureLine', () => {
  it("is the typed errors' own message, and otherwise names REDIS_URL with the password masked", () => {
    const refused = new RedisAuthError('redis://default:***@h:1', 'refused');
    assert.equal(redisFailureLine(refused, URL_WITH_SECRET), refused.message);
    assert.match(
      refused.message,
      /^Redis refused the credentials of REDIS_URL \(redis:\/\/default:\*\*\*@h:1\)$/,
    );
    const down = new RedisUnavailableError('redis://h:1', 'connect ECONNREFUSED');
    assert.equal(redisFailureLine(down, URL_WITH_SECRET), down.message);
    assert.equal(
      redisFailureLine(new Error('Connection is closed.'), URL_WITH_SECRET),
      'Redis at REDIS_URL (redis://default:***@127.0.0.1:6390) failed: Connection is closed.',
    );
  });
});

describe('createFailureLimiter', () => {
  it('admits each distinct failure at once, then the same one at most once per interval', () => {
    let now = 0;
    const limiter = createFailureLimiter({ intervalMs: 30_000, now: () => now });
    assert.deepEqual(limiter.admit('ECONNREFUSED'), { log: true, suppressed: 0 });
    now = 1000;
    assert.equal(limiter.admit('ECONNREFUSED').log, false);
    assert.equal(limiter.admit('ECONNREFUSED').log, false);
    assert.deepEqual(limiter.admit('WRONGPASS'), { log: true, suppressed: 0 });
    now = 30_000;
    assert.deepEqual(limiter.admit('ECONNREFUSED'), { log: true, suppressed: 2 });
    assert.equal(limiter.admit('ECONNREFUSED').log, false);
  });

  it('after a reset, logs the next failure at once', () => {
    const limiter = createFailureLimiter({ intervalMs: 30_000, now: () => 0 });
    limiter.admit('ECONNREFUSED');
    limiter.reset();
    assert.equal(limiter.admit('ECONNREFUSED').log, true);
  });
});
