import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { configuredSinks } from '../../src/feed/sinks/configured-sinks.js';
import { syntheticEvents } from '../helpers/feed.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

const URL_SET = { LEDGER_WEBHOOK_URL: 'https://hooks.example.com/ledger' };
const SECRET = 'whsec-0123456789abcdef';

/** The one line a bad setting fails with. */
function failure(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('loaded');
}

describe('the sinks’ settings', () => {
  it('run no sink by default, and retry ten times from 1 s up to 5 min on a 30 s lease', async () => {
    const config = loadConfig({});
    assert.equal(config.webhookUrl, undefined);
    assert.deepEqual(configuredSinks(config), []);
    assert.deepEqual(
      [
        config.sinkTries,
        config.sinkRetryMinMs,
        config.sinkRetryMaxMs,
        config.sinkLeaseMs,
        config.webhookTimeoutMs,
      ],
      [10, 1000, 300_000, 30_000, 10_000],
    );
  });

  it('give the webhook’s receiver LEDGER_WEBHOOK_TIMEOUT_MS to answer a batch, and refuse a timeout out of range', async () => {
    assert.match(failure({ LEDGER_WEBHOOK_TIMEOUT_MS: '500' }), /^LEDGER_WEBHOOK_TIMEOUT_MS/);
    assert.match(failure({ LEDGER_WEBHOOK_TIMEOUT_MS: 'soon' }), /^LEDGER_WEBHOOK_TIMEOUT_MS/);
    // A receiver that takes the batch and never answers.
    const silent = await startWebhookReceiver(SECRET, () => ({ hang: true }));
    const { url } = silent;
    const config = loadConfig({
      LEDGER_WEBHOOK_URL: url,
      LEDGER_WEBHOOK_SECRET: SECRET,
      LEDGER_WEBHOOK_TIMEOUT_MS: '1000',
    });
    const [webhook] = configuredSinks(config);
    const started = Date.now();
    try {
      await assert.rejects(webhook!.target.deliver(syntheticEvents([1])), /no answer within 1000 ms/);
      const waited = Date.now() - started;
      assert.ok(waited >= 900 && waited < 5000, `gave up after ${waited} ms`);
    } finally {
      await webhook!.target.close();
      await silent.close();
    }
  });

  it('run the webhook sink when its URL and secret are set, with its filter', async () => {
    const config = loadConfig({
      ...URL_SET,
      LEDGER_WEBHOOK_SECRET: SECRET,
      LEDGER_WEBHOOK_FILTER: 'action=transfer&tokenTag=ethereum-usdc-0xa0b8',
    });
    const sinks = configuredSinks(config);
    assert.deepEqual(
      sinks.map((s) => [s.name, s.target.kind, s.filter]),
      [['webhook', 'webhook', { action: 'transfer', tokenTag: 'ethereum-usdc-0xa0b8' }]],
    );
    await Promise.all(sinks.map((s) => s.target.close()));
  });

  it('run the NATS destination as a sink of its own when LEDGER_NATS_URL is set, beside the webhook', async () => {
    const config = loadConfig({
      ...URL_SET,
      LEDGER_WEBHOOK_SECRET: SECRET,
      LEDGER_NATS_URL: 'nats://127.0.0.1:4222',
    });
    const sinks = configuredSinks(config);
    assert.deepEqual(
      sinks.map((s) => [s.name, s.target.kind, s.filter]),
      [
        ['webhook', 'webhook', {}],
        ['nats', 'nats', {}],
      ],
    );
    await Promise.all(sinks.map((s) => s.target.close()));
  });

  it('refuse a webhook URL without its secret, in one line naming the setting and not the URL', () => {
    assert.equal(
      failure(URL_SET),
      'LEDGER_WEBHOOK_SECRET: is required when LEDGER_WEBHOOK_URL is set (it signs every batch)',
    );
    assert.match(
      failure({ ...URL_SET, LEDGER_WEBHOOK_SECRET: 'short' }),
      /^LEDGER_WEBHOOK_SECRET: must be 16 to 256/,
    );
    assert.equal(
      failure({ LEDGER_WEBHOOK_URL: 'ftp://x', LEDGER_WEBHOOK_SECRET: SECRET }).split(':')[0],
      'LEDGER_WEBHOOK_URL',
    );
  });

  it('name the setting of every bad value', () => {
    const bad: Array<[Record<string, string>, string]> = [
      [{ LEDGER_WEBHOOK_FILTER: 'status=packaged' }, 'LEDGER_WEBHOOK_FILTER'],
      [{ LEDGER_WEBHOOK_FILTER: 'action=burn&action=mint' }, 'LEDGER_WEBHOOK_FILTER'],
      [{ LEDGER_SINK_TRIES: '0' }, 'LEDGER_SINK_TRIES'],
      [{ LEDGER_SINK_RETRY_MIN_MS: 'soon' }, 'LEDGER_SINK_RETRY_MIN_MS'],
      [{ LEDGER_SINK_RETRY_MIN_MS: '5000', LEDGER_SINK_RETRY_MAX_MS: '1000' }, 'LEDGER_SINK_RETRY_MAX_MS'],
      [{ LEDGER_SINK_LEASE_MS: '10' }, 'LEDGER_SINK_LEASE_MS'],
    ];
    for (const [env, setting] of bad) {
      const line = failure(env);
      assert.ok(line.startsWith(`${setting}: `), line);
      assert.ok(!line.includes('\n'), line);
    }
  });

  it('stop serve at start, exit 2, with that one line', async () => {
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const env = { ...URL_SET, DATABASE_URL: 'postgres://127.0.0.1:1/none', LOG_LEVEL: 'silent' };
    const signal = new AbortController().signal;
    const code = await main(['serve'], { env, stdout: new PassThrough(), stderr, signal });
    assert.equal(code, 2);
    assert.equal(
      err,
      'ledger-indexer serve: LEDGER_WEBHOOK_SECRET: is required when LEDGER_WEBHOOK_URL is set (it signs every batch)\n',
    );
  });
});
