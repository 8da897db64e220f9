import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { parseNatsUrl } from '../../src/nats-settings.js';

/** Asserts that `env` stops `loadConfig` with one line naming `setting` and matching `problem`. */
function refused(env: Record<string, string>, setting: string, problem: RegExp): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.setting, setting);
      assert.match(error.message, problem);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    },
  );
}

describe('the NATS destination settings', () => {
  it('are off without LEDGER_NATS_URL, with the documented defaults', () => {
    const config = loadConfig({});
    assert.deepEqual(
      {
        url: config.natsUrl,
        stream: config.natsStream,
        subject: config.natsSubject,
        window: config.natsDuplicateWindowMs,
        token: config.natsToken,
      },
      { url: undefined, stream: 'LEDGER_FEED', subject: 'ledger.feed', window: 120_000, token: undefined },
    );
  });

  it('reads each of them', () => {
    const config = loadConfig({
      LEDGER_NATS_URL: 'nats://127.0.0.1:4222',
      LEDGER_NATS_STREAM: 'MIRROR_FEED-2',
      LEDGER_NATS_SUBJECT: 'acme.ledger_1.feed',
      LEDGER_NATS_DUPLICATE_WINDOW: '90s',
      LEDGER_NATS_TOKEN: 's3cret-token',
    });
    assert.equal(config.natsUrl, 'nats://127.0.0.1:4222');
    assert.equal(config.natsStream, 'MIRROR_FEED-2');
    assert.equal(config.natsSubject, 'acme.ledger_1.feed');
    assert.equal(config.natsDuplicateWindowMs, 90_000);
    assert.equal(config.natsToken, 's3cret-token');
    assert.equal(loadConfig({ LEDGER_NATS_DUPLICATE_WINDOW: '1h' }).natsDuplicateWindowMs, 3_600_000);
  });

  it('refuse bad values with one line naming the setting', () => {
    refused({ LEDGER_NATS_URL: 'http://127.0.0.1:4222' }, 'LEDGER_NATS_URL', /nats:\/\/ or tls:\/\//);
    refused({ LEDGER_NATS_URL: 'nats://h:4222/feed' }, 'LEDGER_NATS_URL', /without a path/);
    refused({ LEDGER_NATS_URL: 'not a url' }, 'LEDGER_NATS_URL', /not a valid URL/);
    refused({ LEDGER_NATS_STREAM: 'LEDGER.FEED' }, 'LEDGER_NATS_STREAM', /letters, digits/);
    refused({ LEDGER_NATS_STREAM: 'x'.repeat(65) }, 'LEDGER_NATS_STREAM', /1 to 64/);
    for (const subject of ['ledger.>', 'ledger.*.feed', 'ledger..feed', '.ledger', 'ledger feed']) {
      refused({ LEDGER_NATS_SUBJECT: subject }, 'LEDGER_NATS_SUBJECT', /without wildcards/);
    }
    for (const window of ['500ms', '0s', '8d', '2', 'two minutes']) {
      refused({ LEDGER_NATS_DUPLICATE_WINDOW: window }, 'LEDGER_NATS_DUPLICATE_WINDOW', /from 1s to 7d/);
    }
    refused({ LEDGER_NATS_TOKEN: 'has space' }, 'LEDGER_NATS_TOKEN', /printable characters/);
    refused(
      { LEDGER_NATS_URL: 'nats://feed:pw@h', LEDGER_NATS_TOKEN: 'tok' },
      'LEDGER_NATS_TOKEN',
      /one or the other/,
    );
  });

  it('never put the password or the token in a message', () => {
    for (const env of [
      { LEDGER_NATS_URL: 'nats://feed:s3cret@h:4222/x' },
      { LEDGER_NATS_URL: 'nats://feed:s3cret@h', LEDGER_NATS_TOKEN: 's3cret' },
      { LEDGER_NATS_TOKEN: 's3cret has a space' },
    ]) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && !error.message.includes('s3cret'),
      );
    }
  });

  it('hand the client the server apart from its user and password', () => {
    assert.deepEqual(parseNatsUrl('nats://127.0.0.1', 'X'), {
      server: '127.0.0.1:4222',
      tls: false,
      user: undefined,
      pass: undefined,
    });
    assert.deepEqual(parseNatsUrl('nats://feed:p%40ss@nats.internal:4333/', 'X'), {
      server: 'nats.internal:4333',
      tls: false,
      user: 'feed',
      pass: 'p@ss',
    });
    assert.deepEqual(parseNatsUrl('tls://[::1]:4222', 'X'), {
      server: '[::1]:4222',
      tls: true,
      user: undefined,
      pass: undefined,
    });
  });
});
