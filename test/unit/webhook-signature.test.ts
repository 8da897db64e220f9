import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { signWebhook, verifyWebhookSignature } from '../../src/feed/sinks/webhook-signature.js';
import { parseRetryAfter } from '../../src/feed/sinks/webhook-target.js';

const secret = 'whsec-0123456789abcdef';
const body = '{"sink":"webhook","first":1,"last":1,"events":[]}';
const now = 1_800_000_000;

describe('the webhook signature', () => {
  it('is the hex HMAC-SHA256 of "<timestamp>.<body>" under the secret, as v1=', () => {
    const expected = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    assert.equal(signWebhook({ secret, timestamp: now, body }), `v1=${expected}`);
  });

  it('verifies with the secret, and not with another, another body or another timestamp', () => {
    const signature = signWebhook({ secret, timestamp: now, body });
    const input = { secret, timestamp: String(now), body, signature, nowS: now };
    assert.equal(verifyWebhookSignature(input), true);
    assert.equal(verifyWebhookSignature({ ...input, secret: 'another-secret-000000' }), false);
    assert.equal(verifyWebhookSignature({ ...input, body: `${body} ` }), false);
    assert.equal(verifyWebhookSignature({ ...input, timestamp: String(now + 1), nowS: now + 1 }), false);
    assert.equal(verifyWebhookSignature({ ...input, signature: 'v1=00' }), false);
  });

  it('refuses a timestamp older (or newer) than the tolerance: a replay', () => {
    const signature = signWebhook({ secret, timestamp: now, body });
    const input = { secret, timestamp: String(now), body, signature };
    assert.equal(verifyWebhookSignature({ ...input, nowS: now + 300 }), true);
    assert.equal(verifyWebhookSignature({ ...input, nowS: now + 301 }), false);
    assert.equal(verifyWebhookSignature({ ...input, nowS: now - 301 }), false);
    assert.equal(verifyWebhookSignature({ ...input, nowS: now + 3600, toleranceS: 3600 }), true);
    assert.equal(verifyWebhookSignature({ ...input, timestamp: 'soon', nowS: now }), false);
  });

  it('takes any of several signatures (a secret being rotated)', () => {
    const old = signWebhook({ secret: 'old-secret-0123456789', timestamp: now, body });
    const current = signWebhook({ secret, timestamp: now, body });
    const input = { secret, timestamp: String(now), body, nowS: now };
    assert.equal(verifyWebhookSignature({ ...input, signature: `${old}, ${current}` }), true);
    assert.equal(verifyWebhookSignature({ ...input, signature: old }), false);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds or an HTTP date, and nothing else', () => {
    const at = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', at), 120_000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', at), 30_000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', at), 0);
    assert.equal(parseRetryAfter(undefined, at), undefined);
    assert.equal(parseRetryAfter('soon', at), undefined);
    assert.equal(parseRetryAfter('-5', at), undefined);
  });
});
