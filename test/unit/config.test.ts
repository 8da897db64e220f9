import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACCOUNT_MAX_LENGTH,
  accountProblem,
  ENV,
  flagName,
  LIMITS,
  loadConfig,
  parseAccounts,
  redactUrl,
  unknownSettings,
} from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

describe('loadConfig', () => {
  it('applies documented defaults to an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.ledgerBaseUrl, undefined);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, './.ledger-indexer');
    assert.equal(config.logLevel, 'info');
    assert.equal(config.requestTimeoutMs, 10_000);
    assert.equal(config.retries, 5);
    assert.equal(config.requestsPerSecond, 50);
    assert.deepEqual(config.ledgerPaths, {});
  });

  it('bounds requests by default: 8 MiB bodies, hedging after 3 × the median and at least 500 ms', () => {
    const config = loadConfig({});
    assert.equal(config.maxBodyBytes, 8 * 1024 * 1024);
    assert.equal(config.hedgeAfter, 3);
    assert.equal(config.hedgeMinMs, 500);
    const set = loadConfig({
      LEDGER_MAX_BODY_BYTES: '65536',
      LEDGER_HEDGE_AFTER: '2.5',
      LEDGER_HEDGE_MIN_MS: '0',
    });
    assert.equal(set.maxBodyBytes, 65536);
    assert.equal(set.hedgeAfter, 2.5);
    assert.equal(set.hedgeMinMs, 0);
    assert.equal(loadConfig({ LEDGER_HEDGE_AFTER: '0' }).hedgeAfter, 0);
  });

  it('writes two batches of a walk at once by default, the flag over the environment', () => {
    assert.equal(loadConfig({}).writers, 2);
    assert.equal(loadConfig({ LEDGER_WRITERS: '4' }).writers, 4);
    assert.equal(loadConfig({ LEDGER_WRITERS: '4' }, { writers: '1' }).writers, 1);
  });

  it('re-reads records not final 2 s after their last read, stragglers with backoff after 2 minutes', () => {
    const config = loadConfig({});
    assert.equal(config.recheckAfterMs, 2000);
    assert.equal(config.stragglerAgeMs, 120_000);
    const set = loadConfig(
      { LEDGER_RECHECK_AFTER_MS: '5000', LEDGER_STRAGGLER_AGE_MS: '600000' },
      { recheckAfterMs: '500' },
    );
    assert.deepEqual([set.recheckAfterMs, set.stragglerAgeMs], [500, 600_000]);
    assert.throws(
      () => loadConfig({}, { recheckAfterMs: 'soon' }),
      /--recheck-after-ms: must be a whole number/,
    );
  });

  it('reads every variable and lets flag overrides win', () => {
    const config = loadConfig(
      {
        LEDGER_BASE_URL: 'http://127.0.0.1:9000',
        DATABASE_URL: 'postgres://u:p@127.0.0.1/db',
        REDIS_URL: 'redis://127.0.0.1:6379',
        LOG_LEVEL: 'debug',
        LEDGER_REQUEST_TIMEOUT_MS: '2500',
        LEDGER_PATHS: '{"txsByHash":"/tx/{ledgerHash}"}',
      },
      { ledgerBaseUrl: 'http://127.0.0.1:9999' },
    );
    assert.equal(config.ledgerBaseUrl, 'http://127.0.0.1:9999');
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.requestTimeoutMs, 2500);
    assert.deepEqual(config.ledgerPaths, { txsByHash: '/tx/{ledgerHash}' });
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ LEDGER_REQUEST_TIMEOUT_MS: 'soon' }, 'LEDGER_REQUEST_TIMEOUT_MS'],
    [{ LEDGER_REQUEST_TIMEOUT_MS: '0' }, 'LEDGER_REQUEST_TIMEOUT_MS'],
    [{ LEDGER_RETRIES: '-1' }, 'LEDGER_RETRIES'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LEDGER_BASE_URL: 'not a url' }, 'LEDGER_BASE_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ LEDGER_PATHS: '[1]' }, 'LEDGER_PATHS'],
    [{ LEDGER_RETRY_MIN_MS: '500', LEDGER_RETRY_MAX_MS: '100' }, 'LEDGER_RETRY_MAX_MS'],
    [{ LEDGER_CONCURRENCY: '1000000000' }, 'LEDGER_CONCURRENCY'],
    [{ LEDGER_CONCURRENCY: '257' }, 'LEDGER_CONCURRENCY'],
    [{ LEDGER_WRITERS: '0' }, 'LEDGER_WRITERS'],
    [{ LEDGER_WRITERS: '17' }, 'LEDGER_WRITERS'],
    [{ LEDGER_RETRIES: '101' }, 'LEDGER_RETRIES'],
    [{ LEDGER_REQUEST_TIMEOUT_MS: '600001' }, 'LEDGER_REQUEST_TIMEOUT_MS'],
    [{ LEDGER_RETRY_MIN_MS: '60001' }, 'LEDGER_RETRY_MIN_MS'],
    [{ LEDGER_RETRY_MAX_MS: '600001' }, 'LEDGER_RETRY_MAX_MS'],
    [{ LEDGER_MAX_RETRY_WAIT_MS: '3600001' }, 'LEDGER_MAX_RETRY_WAIT_MS'],
    [{ LEDGER_REQUESTS_PER_SECOND: '100001' }, 'LEDGER_REQUESTS_PER_SECOND'],
    [{ LEDGER_MAX_BODY_BYTES: '0' }, 'LEDGER_MAX_BODY_BYTES'],
    [{ LEDGER_MAX_BODY_BYTES: '8MiB' }, 'LEDGER_MAX_BODY_BYTES'],
    [{ LEDGER_HEDGE_AFTER: '0.5' }, 'LEDGER_HEDGE_AFTER'],
    [{ LEDGER_HEDGE_AFTER: 'often' }, 'LEDGER_HEDGE_AFTER'],
    [{ LEDGER_HEDGE_MIN_MS: '-5' }, 'LEDGER_HEDGE_MIN_MS'],
    [{ LEDGER_HEDGE_AFTER: '101' }, 'LEDGER_HEDGE_AFTER'],
    [{ LEDGER_MAX_BODY_BYTES: '1073741825' }, 'LEDGER_MAX_BODY_BYTES'],
    [{ LEDGER_RECHECK_AFTER_MS: '3600001' }, 'LEDGER_RECHECK_AFTER_MS'],
    [{ LEDGER_STRAGGLER_AGE_MS: 'an hour' }, 'LEDGER_STRAGGLER_AGE_MS'],
    [{ LEDGER_PAGING: 'cursor' }, 'LEDGER_PAGING'],
    [{ LEDGER_PAGE_COUNT: '9' }, 'LEDGER_PAGE_COUNT'],
    [{ LEDGER_PAGE_COUNT: '1001' }, 'LEDGER_PAGE_COUNT'],
    [{ LEDGER_PAGE_COUNT: 'lots' }, 'LEDGER_PAGE_COUNT'],
    [{ LEDGER_LIST_URL: 'explorer.example.org' }, 'LEDGER_LIST_URL'],
    [{ LEDGER_LIST_URL: 'ftp://explorer.example.org' }, 'LEDGER_LIST_URL'],
    [{ LEDGER_ACCOUNT_LISTS: 'query' }, 'LEDGER_ACCOUNT_LISTS'],
    [{ LEDGER_LOOKUPS: 'explorer' }, 'LEDGER_LOOKUPS'],
    [{ LEDGER_READ_DATABASE_URL: 'mysql://reader@db/ledger' }, 'LEDGER_READ_DATABASE_URL'],
    // The embedded database has one role: nothing to read as.
    [{ LEDGER_READ_DATABASE_URL: 'postgres://reader@db/ledger' }, 'LEDGER_READ_DATABASE_URL'],
  ];
  for (const [env, setting] of bad) {
    it(`rejects a bad ${setting} with one line naming it`, () => {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.setting === setting &&
          error.message.startsWith(`${setting}:`) &&
          !error.message.includes('\n'),
      );
    });
  }

  it('accepts every numeric setting up to its maximum and names the range when above it', () => {
    const env: Record<string, string> = {};
    for (const [key, range] of Object.entries(LIMITS))
      env[ENV[key as keyof typeof LIMITS]] = String(range.max);
    const config = loadConfig(env);
    for (const [key, range] of Object.entries(LIMITS)) {
      assert.equal(config[key as keyof typeof LIMITS], range.max, key);
    }
    assert.throws(
      () => loadConfig({ LEDGER_CONCURRENCY: '1000000000' }),
      /^ConfigError: LEDGER_CONCURRENCY: must be a whole number from 1 to 256 \(got '1000000000'\)$/,
    );
  });

  it('binds the HTTP surface to loopback by default and leaves its port unset', () => {
    const config = loadConfig({});
    assert.equal(config.httpHost, '127.0.0.1');
    assert.equal(config.httpPort, undefined);
    const set = loadConfig({ LEDGER_HTTP_HOST: '0.0.0.0', LEDGER_HTTP_PORT: '9464' }, { httpPort: '0' });
    assert.deepEqual([set.httpHost, set.httpPort], ['0.0.0.0', 0]);
    assert.equal(flagName('httpPort'), '--http-port');
    assert.throws(
      () => loadConfig({}, { httpPort: '65536' }),
      /^ConfigError: --http-port: must be a whole number from 0 to 65535/,
    );
  });

  it('speaks the key dialect by the settings: auto paging, 100 records a request, lists on the base URL', () => {
    const config = loadConfig({});
    assert.equal(config.ledgerPaging, 'auto');
    assert.equal(config.ledgerPageCount, 100);
    assert.equal(config.ledgerListUrl, undefined);
    assert.equal(config.ledgerAccountLists, 'auto');
    assert.equal(config.ledgerLookups, 'interface');
    const set = loadConfig({
      LEDGER_PAGING: 'Key',
      LEDGER_PAGE_COUNT: '1000',
      LEDGER_LIST_URL: 'https://explorer.example.org/api',
      LEDGER_ACCOUNT_LISTS: 'path',
      LEDGER_LOOKUPS: 'deployed',
    });
    assert.deepEqual(
      [set.ledgerPaging, set.ledgerPageCount, set.ledgerListUrl, set.ledgerAccountLists, set.ledgerLookups],
      ['key', 1000, 'https://explorer.example.org/api', 'path', 'deployed'],
    );
    const flags = loadConfig(
      { LEDGER_PAGING: 'key', LEDGER_PAGE_COUNT: '50' },
      { ledgerPaging: 'page', ledgerPageCount: '10', ledgerListUrl: 'http://127.0.0.1:2' },
    );
    assert.deepEqual(
      [flags.ledgerPaging, flags.ledgerPageCount, flags.ledgerListUrl],
      ['page', 10, 'http://127.0.0.1:2'],
    );
    assert.deepEqual(
      [flagName('ledgerPaging'), flagName('ledgerPageCount'), flagName('ledgerListUrl')],
      ['--paging', '--count', '--list-url'],
    );
    assert.throws(
      () => loadConfig({}, { ledgerPaging: 'cursor' }),
      /^ConfigError: --paging: must be one of auto, key, page \(got 'cursor'\)$/,
    );
    assert.throws(
      () => loadConfig({}, { ledgerPageCount: '5' }),
      /^ConfigError: --count: must be a whole number from 10 to 1000 \(got '5'\)$/,
    );
    assert.throws(
      () => loadConfig({}, { ledgerListUrl: 'nope' }),
      /^ConfigError: --list-url: is not a valid URL$/,
    );
  });

  it('names the flag, not the variable, when the flag was wrong', () => {
    assert.throws(() => loadConfig({}, { ledgerBaseUrl: 'nope' }), /^ConfigError: --base-url:|--base-url/);
    assert.equal(flagName('requestTimeoutMs'), '--request-timeout-ms');
  });
});

describe('unknownSettings', () => {
  it('names each variable of ours that is no setting, with the one meant when it is clear', () => {
    assert.deepEqual(
      unknownSettings({
        LEDGER_DATABASE_URL: 'postgres://h/db',
        LEDGER_CONCURENCY: '8',
        LEDGER_RETRY_AFTER_CAP_MS: '1000',
        LEDGER_SOMETHING_ELSE: 'x',
        LEDGER_CONCURRENCY: '8',
        DATABASE_URL: 'postgres://h/db',
        LEDGER_ACCOUNTS: '--global',
        PATH: '/bin',
      }),
      [
        'LEDGER_CONCURENCY is not a setting and is ignored (did you mean LEDGER_CONCURRENCY?)',
        'LEDGER_DATABASE_URL is not a setting and is ignored (did you mean DATABASE_URL?)',
        'LEDGER_RETRY_AFTER_CAP_MS is not a setting and is ignored (did you mean LEDGER_MAX_RETRY_WAIT_MS?)',
        'LEDGER_SOMETHING_ELSE is not a setting and is ignored',
      ],
    );
    assert.deepEqual(unknownSettings(Object.fromEntries(Object.values(ENV).map((name) => [name, '1']))), []);
  });
});

describe('redactUrl', () => {
  it('hides passwords and keeps the rest', () => {
    assert.equal(redactUrl('postgres://app:s3cret@db:5432/ledger'), 'postgres://app:***@db:5432/ledger');
    assert.equal(redactUrl('redis://127.0.0.1:6379'), 'redis://127.0.0.1:6379');
  });
});

describe('accountProblem and parseAccounts', () => {
  it('accepts the account forms of the ledger', () => {
    for (const account of [
      `0x${'aB'.repeat(20)}`,
      'Ia7b_-X1'.repeat(5).concat('abc'),
      'eid1234567890',
      'a'.repeat(ACCOUNT_MAX_LENGTH),
    ]) {
      assert.equal(accountProblem(account), null, account);
    }
  });

  it('refuses long, empty, spaced and control-character text, naming the setting', () => {
    assert.match(accountProblem('a'.repeat(ACCOUNT_MAX_LENGTH + 1)) ?? '', /at most 128 characters/);
    assert.match(accountProblem('') ?? '', /must not be empty/);
    for (const bad of ['0xabc\n', ' 0xabc', '0x\tabc', '0x\u0000abc', '0x\u200babc']) {
      assert.match(accountProblem(bad) ?? '', /spaces or control characters/, JSON.stringify(bad));
    }
    assert.throws(
      () => parseAccounts(['eid1', 'bad one'], '--account'),
      (error: unknown) => error instanceof ConfigError && error.setting === '--account',
    );
    assert.deepEqual(parseAccounts(undefined, '--account'), []);
  });
});
