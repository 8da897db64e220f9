import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JetStreamApiError } from '@nats-io/jetstream';
import {
  AuthorizationError,
  ClosedConnectionError,
  ConnectionError,
  InvalidArgumentError,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { natsFailure } from '../../src/feed/sinks/nats-failures.js';
import { capturesFeed, eventSubject, subjectToken } from '../../src/feed/sinks/nats-subjects.js';
import { SinkDeliveryError } from '../../src/feed/sinks/sink-target.js';

const event = (action: string, tokenTag: string, kind: 'stored' | 'changed'): FeedEvent =>
  ({
    position: 7,
    rawId: 7,
    action,
    tokenTag,
    from: 'a',
    to: 'b',
    stampedAt: '',
    kind,
    fields: {},
  }) as FeedEvent;

describe('the subjects of the feed on NATS', () => {
  it('are <prefix>.<action>.<tokenTag>.<kind>, the usual actions and token tags as they are', () => {
    assert.equal(
      eventSubject('ledger.feed', event('transfer', 'ethereum-usdc-0xa0b8', 'stored')),
      'ledger.feed.transfer.ethereum-usdc-0xa0b8.stored',
    );
    assert.equal(
      eventSubject('x', event('bundle', 'ethereum,bsc-usdt-0x1,0x2', 'changed')),
      'x.bundle.ethereum,bsc-usdt-0x1,0x2.changed',
    );
  });

  it('keep any value one token: dots, wildcards, spaces and other bytes as %XX, an empty value as %', () => {
    assert.equal(subjectToken('a.b*c>d e%f'), 'a%2Eb%2Ac%3Ed%20e%25f');
    assert.equal(subjectToken('ünï'), '%C3%BCn%C3%AF');
    assert.equal(subjectToken(''), '%');
    assert.equal(eventSubject('p', event('', 'x.y', 'stored')), 'p.%.x%2Ey.stored');
    for (const value of ['a.b', '*', '>', ' ', '\t', 'a\nb']) {
      const token = subjectToken(value);
      assert.doesNotMatch(token, /[.*>\s]/, `${JSON.stringify(value)} → ${token}`);
    }
  });

  it('are captured by <prefix>.>, a wider > or a * in place of a prefix word, not by a narrower filter', () => {
    for (const subjects of [['ledger.feed.>'], ['ledger.>'], ['>'], ['other', 'ledger.*.>'], ['*.feed.>']]) {
      assert.equal(capturesFeed(subjects, 'ledger.feed'), true, JSON.stringify(subjects));
    }
    for (const subjects of [
      [],
      ['ledger.feed'],
      ['ledger.feed.*'],
      ['ledger.feed.transfer.>'],
      ['ledger.feedx.>'],
      ['ledger.feed.*.*.*'],
      ['other.>'],
    ]) {
      assert.equal(capturesFeed(subjects, 'ledger.feed'), false, JSON.stringify(subjects));
    }
  });
});

describe('a NATS failure as a SinkDeliveryError', () => {
  const classify = (error: unknown) => natsFailure(error, 'publishing position 7', 1500);
  const apiError = (status: number, code: number, description: string) =>
    new JetStreamApiError({ code: status, err_code: code, description });

  it('is retryable when trying again later may pass by itself', () => {
    for (const error of [
      new TimeoutError(),
      new ConnectionError('connection refused'),
      new ClosedConnectionError(),
      new RequestError('no responders', { cause: new NoRespondersError('ledger.feed.x') }),
      new Error('jetstream is not enabled', {
        cause: new RequestError('no responders', { cause: new NoRespondersError('ledger.feed.x') }),
      }),
      apiError(503, 10008, 'JetStream system temporarily unavailable'),
      new Error('something new'),
    ]) {
      const failure = classify(error);
      assert.ok(failure instanceof SinkDeliveryError);
      assert.equal(failure.retryable, true, `${error.constructor.name}: ${failure.message}`);
      assert.equal(failure.cause, error);
      assert.match(failure.message, /^NATS: publishing position 7: /);
    }
    assert.match(classify(new TimeoutError()).message, /no answer within 1500 ms/);
    assert.match(
      classify(new Error('x', { cause: new RequestError('r', { cause: new NoRespondersError('s') }) }))
        .message,
      /no responders/,
    );
  });

  it('is not retryable when someone has to change something first', () => {
    for (const error of [
      new AuthorizationError('Authorization Violation'),
      new PermissionViolationError('Permissions Violation for Publish', 'publish', 'ledger.feed.x'),
      apiError(400, 10054, 'message size exceeds maximum allowed'),
      InvalidArgumentError.format('tls', 'is not available on this server'),
    ]) {
      assert.equal(classify(error).retryable, false, String(error));
    }
    const given = new SinkDeliveryError('as it was', { retryable: false });
    assert.equal(classify(given), given);
  });
});
