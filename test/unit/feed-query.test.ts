/** The change feed's pure parts: a request's parameters, the filters, SSE frames, the retention setting. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_FEED_RETENTION_MS, loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { type FeedEvent, matchesFilter } from '../../src/feed/feed-event.js';
import { frames } from '../../src/feed/feed-http.js';
import { FeedRequestError, parseFeedRequest } from '../../src/feed/feed-query.js';

const parse = (query: string, headers: { accept?: string; lastEventId?: string } = {}) =>
  parseFeedRequest({
    query: new URLSearchParams(query),
    accept: headers.accept,
    lastEventId: headers.lastEventId,
  });

function event(overrides: Partial<FeedEvent> = {}): FeedEvent {
  return {
    position: 7,
    rawId: 1,
    action: 'transfer',
    tokenTag: 'ethereum-usdc-0xa0b8',
    from: '0xAbCdEf0123456789aBcDeF0123456789abCDef01',
    to: 'bob',
    stampedAt: '2026-12-06T00:00:00.000Z',
    kind: 'changed',
    fields: { status: ['confirmed', 'packaged'] },
    ...overrides,
  } as FeedEvent;
}

describe('parseFeedRequest', () => {
  it('reads a long poll: after, wait, limit and the filters', () => {
    assert.deepEqual(
      parse('after=12&wait=20s&limit=5&account=a&tokenTag=t&action=burn&consumer=ledger-dash.1'),
      {
        mode: 'poll',
        start: { after: 12 },
        filter: { account: 'a', tokenTag: 't', action: 'burn' },
        consumer: 'ledger-dash.1',
        waitMs: 20_000,
        limit: 5,
      },
    );
    assert.deepEqual(parse('').start, { after: 0 }, 'from the beginning by default');
    assert.deepEqual(parse('after=now').start, { atHead: true });
    assert.equal((parse('wait=1500ms') as { waitMs: number }).waitMs, 1500);
  });

  it('reads an SSE request, Last-Event-ID before after', () => {
    assert.deepEqual(parse('after=3', { accept: 'text/event-stream', lastEventId: '41' }), {
      mode: 'sse',
      start: { after: 41 },
      filter: { account: undefined, tokenTag: undefined, action: undefined },
      consumer: null,
    });
  });

  it('refuses bad parameters, naming them', () => {
    for (const [query, parameter] of [
      ['after=-1', 'after'],
      ['after=abc', 'after'],
      ['wait=2m', 'wait'],
      ['wait=soon', 'wait'],
      ['limit=0', 'limit'],
      ['limit=5000', 'limit'],
      ['consumer=two words', 'consumer'],
      [`consumer=${'x'.repeat(65)}`, 'consumer'],
    ] as const) {
      assert.throws(
        () => parse(query),
        (error: unknown) => error instanceof FeedRequestError && error.parameter === parameter,
        query,
      );
    }
    assert.throws(() => parse('', { accept: 'text/event-stream', lastEventId: 'x' }), FeedRequestError);
  });
});

describe('matchesFilter', () => {
  it('matches an EVM account in any case, on either side, and the token tag in any case', () => {
    assert.ok(matchesFilter(event(), { account: '0xabcdef0123456789abcdef0123456789abcdef01' }));
    assert.ok(
      matchesFilter(event(), { account: 'bob', tokenTag: 'ETHEREUM-USDC-0xA0B8', action: 'transfer' }),
    );
    assert.ok(!matchesFilter(event(), { account: 'Bob' }), 'other accounts compare exactly');
    assert.ok(!matchesFilter(event(), { action: 'burn' }));
    assert.ok(matchesFilter(event(), {}));
  });
});

describe('frames', () => {
  it('writes one frame an event, and an id alone when the stretch ends past its last event', () => {
    assert.equal(frames([event()], 7, 3), `id: 7\ndata: ${JSON.stringify(event())}\n\n`);
    assert.equal(frames([event()], 9, 3), `id: 7\ndata: ${JSON.stringify(event())}\n\nid: 9\n\n`);
    assert.equal(frames([], 9, 3), 'id: 9\n\n');
    assert.equal(frames([], 3, 3), '');
  });
});

describe('LEDGER_FEED_RETENTION', () => {
  it('defaults to seven days and takes a duration with its unit', () => {
    assert.equal(loadConfig({}).feedRetentionMs, DEFAULT_FEED_RETENTION_MS);
    assert.equal(loadConfig({ LEDGER_FEED_RETENTION: '12h' }).feedRetentionMs, 12 * 3_600_000);
    assert.equal(loadConfig({ LEDGER_FEED_RETENTION: '30m' }).feedRetentionMs, 30 * 60_000);
  });

  it('refuses a bad value with one line naming the setting', () => {
    for (const value of ['7', 'seven days', '30s', '4000d', '-1d']) {
      assert.throws(
        () => loadConfig({ LEDGER_FEED_RETENTION: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^LEDGER_FEED_RETENTION: /.test(error.message) &&
          !error.message.includes('\n'),
        value,
      );
    }
  });
});
