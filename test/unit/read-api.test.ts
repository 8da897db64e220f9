/** The read API's pure parts: which stream answers, freshness, list requests, access, record text. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkBindable, isAuthorized, isLoopback } from '../../src/app/read-api/access.js';
import { listBody } from '../../src/app/read-api/body-cap.js';
import {
  answeringStream,
  completeUpTo,
  coveringKeys,
  freshnessHeaders,
} from '../../src/app/read-api/coverage.js';
import { READ_MAX_COUNT, readListRequest, readTimeRange } from '../../src/app/read-api/list-request.js';
import { loadConfig } from '../../src/config.js';
import { type RecordRow, recordJson } from '../../src/db/queries/read-api/record-rows.js';
import { ConfigError } from '../../src/errors.js';

const EVM = `0x${'Ab'.repeat(20)}`;
const stream = (key: string, watermark: number | null) => ({
  key,
  watermark,
  headRawId: null,
  headSeenAt: null,
  lastSuccessAt: null,
});

describe('read API coverage', () => {
  it('names the global list first, then the account, then the exact filtered stream', () => {
    assert.deepEqual(coveringKeys({}), ['txs']);
    assert.deepEqual(coveringKeys({ action: 'burn' }), ['txs', 'txs?action=burn']);
    assert.deepEqual(coveringKeys({ account: EVM, tokenTag: 't' }), [
      'txs',
      `txsByAccount/${EVM.toLowerCase()}`,
      `txsByAccount/${EVM.toLowerCase()}?tokenTag=t`,
    ]);
    assert.deepEqual(coveringKeys({ account: EVM, globalOnly: true }), ['txs']);
  });

  it('answers from the first backfilled stream only', () => {
    const keys = coveringKeys({ account: 'acc' });
    assert.equal(answeringStream(keys, [stream('txs', null), stream('txsByAccount/acc', null)]), undefined);
    assert.equal(
      answeringStream(keys, [stream('txs', null), stream('txsByAccount/acc', 5)])?.key,
      'txsByAccount/acc',
    );
    assert.equal(answeringStream(keys, [stream('txs', 9), stream('txsByAccount/acc', 5)])?.key, 'txs');
  });

  it('says how far behind: rawIds past the watermark, and the time since it last held the head', () => {
    const now = new Date('2026-01-01T00:01:00Z');
    const synced = new Date('2026-01-01T00:00:00Z');
    const seen = new Date('2026-01-01T00:00:30Z');
    const base = { key: 'txs', watermark: 100, lastSuccessAt: synced };
    assert.deepEqual(freshnessHeaders({ ...base, headRawId: 100, headSeenAt: seen }, now), {
      'x-mirror-watermark': '100',
      'x-mirror-lag-raw-ids': '0',
      'x-mirror-lag-ms': '30000',
    });
    assert.deepEqual(freshnessHeaders({ ...base, headRawId: 130, headSeenAt: seen }, now), {
      'x-mirror-watermark': '100',
      'x-mirror-lag-raw-ids': '30',
      'x-mirror-lag-ms': '60000',
    });
  });

  it('answers up to the watermark, and nothing before a backfill', () => {
    assert.equal(completeUpTo(stream('txs', 100)), 100);
    assert.equal(completeUpTo(stream('txs', null)), null);
  });
});

describe('read API list requests', () => {
  const read = (query: string, account?: string) =>
    readListRequest({ params: new URLSearchParams(query), account, knownTags: ['a-b-1', 'a-b-1,2'] });

  it('picks the dialect as the simulator does and caps count silently', () => {
    assert.equal((read('page=2') as { dialect: string }).dialect, 'page');
    const key = read(`count=500&order=ASC&address=${EVM}`);
    assert.ok('dialect' in key && key.dialect === 'key');
    assert.deepEqual(key.query, { cursor: undefined, order: 'asc', count: READ_MAX_COUNT });
    assert.equal(key.filter.account, EVM);
    // The page dialect knows no `address`; the path's account is echoed as `accid`.
    const page = read(`address=${EVM}`, 'acc');
    assert.ok('dialect' in page && page.dialect === 'page');
    assert.deepEqual([page.filter.account, page.accid], ['acc', 'acc']);
  });

  it('reads a key request tag list against the known tags, commas inside tags included', () => {
    const key = read('count=5&tokenTag=a-b-1,2,nope');
    assert.ok('dialect' in key && key.dialect === 'key');
    assert.deepEqual(key.filter.tags, ['a-b-1,2']);
  });

  it('reads since and until as milliseconds or ISO times, and refuses anything else', () => {
    assert.deepEqual(readTimeRange(new URLSearchParams('since=0&until=2026-01-02')), {
      since: '1970-01-01T00:00:00.000Z',
      until: '2026-01-02T00:00:00.000Z',
    });
    // A `+` sent unencoded arrives as a space: read as the offset it was.
    for (const offset of ['%2B02:00', '+02:00', '%2B0200']) {
      assert.deepEqual(readTimeRange(new URLSearchParams(`since=2026-01-02T03:04:05${offset}`)), {
        since: '2026-01-02T01:04:05.000Z',
      });
    }
    assert.deepEqual(readTimeRange(new URLSearchParams('since=soon')), { error: 'err_invalid_since' });
    assert.deepEqual(readTimeRange(new URLSearchParams('until=9999999999999999')), {
      error: 'err_invalid_until',
    });
  });
});

describe('read API access', () => {
  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost'])
      assert.ok(isLoopback(host), host);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.org']) assert.ok(!isLoopback(host), host);
  });

  it('refuses a non-loopback address without a token, in one line naming the setting', () => {
    assert.throws(
      () => checkBindable('0.0.0.0', undefined),
      (error: unknown) => {
        return (
          error instanceof ConfigError &&
          error.setting === 'LEDGER_HTTP_TOKEN' &&
          !error.message.includes('\n')
        );
      },
    );
    checkBindable('0.0.0.0', 'a-token-long-enough');
    checkBindable('127.0.0.1', undefined);
  });

  it('checks the bearer token when one is set', () => {
    assert.ok(isAuthorized(undefined, undefined));
    assert.ok(isAuthorized('secret-token-000000', 'Bearer secret-token-000000'));
    assert.ok(!isAuthorized('secret-token-000000', 'Bearer secret-token-000001'));
    assert.ok(!isAuthorized('secret-token-000000', 'secret-token-000000'));
    assert.ok(!isAuthorized('secret-token-000000', undefined));
  });

  it('takes LEDGER_HTTP_TOKEN of 16 to 256 printable characters', () => {
    assert.equal(loadConfig({ LEDGER_HTTP_TOKEN: 'x'.repeat(16) }).httpToken, 'x'.repeat(16));
    assert.throws(() => loadConfig({ LEDGER_HTTP_TOKEN: 'short' }), /^ConfigError: LEDGER_HTTP_TOKEN: /);
  });
});

describe('read API body cap', () => {
  it('cuts a key answer short past the byte cap, keeping at least one record', () => {
    const body = (texts: string[], maxBytes: number) =>
      listBody('[', texts, (cut) => `]${cut}`, maxBytes).toString();
    assert.equal(body(['aaaa', 'bbbb', 'cccc'], 10), '[aaaa,bbbb]true');
    assert.equal(body(['aaaa', 'bbbb'], 10), '[aaaa,bbbb]false');
    assert.equal(body(['a'.repeat(50), 'b'], 10), `[${'a'.repeat(50)}]true`);
    assert.equal(body(['é', 'éé', 'x'], 8), '[é,éé]true');
    assert.equal(body([], 10), '[]false');
  });

  it("writes a list's body as the UTF-8 bytes of its texts joined", () => {
    const texts = ['{"a":"plain"}', '{"b":"é ✓ 𝄞 \\u0000"}', '{"c":""}'];
    const bytes = listBody('{"txs":[', texts, () => '],"hasNextPage":true}');
    const text = `{"txs":[${texts.join(',')}],"hasNextPage":true}`;
    assert.ok(bytes.equals(Buffer.from(text, 'utf8')));
    assert.equal(listBody('[', [], () => ']').toString(), '[]');
    assert.equal(listBody('[', ['1'], () => ']').toString(), '[1]');
  });
});

describe('read API record text', () => {
  it('writes amounts as decimal strings and rawId, nonce and timestamp as exact JSON numbers', () => {
    const row: RecordRow = {
      raw_id: '9007199254740993',
      record_id: '',
      token_symbol: 'AR',
      action: 'transfer',
      from_account: 'a',
      to_account: 'b',
      amount: '115792089237316195423570985008687907853269984665640564039457584007913129639936',
      fee: '0',
      fee_recipient: 'f',
      nonce: '123456789012345678901',
      token_id: '0',
      chain_type: 'arweave',
      chain_id: '0',
      data: '{"x":"\\u0001"}',
      version: 'v1',
      sig: 's',
      ledger_hash: '0x1',
      status: 'confirmed',
      internal_status: '{"status":"success"}',
      timestamp_ms: '0',
      target_chain_tx_hash: '',
      express_chain_tx_hash: '',
      express_withdraw_fee: '',
      express_refund_ledger_hash: '',
      express_err: '',
    };
    const text = recordJson(row);
    assert.match(text, /^\{"rawId":9007199254740993,"id":"",/);
    assert.match(text, /"nonce":123456789012345678901,/);
    assert.match(
      text,
      /"amount":"115792089237316195423570985008687907853269984665640564039457584007913129639936"/,
    );
    const parsed = JSON.parse(text) as Record<string, unknown>;
    assert.equal(parsed['data'], '{"x":"\\u0001"}');
    assert.deepEqual(parsed['express'], { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' });
  });
});
