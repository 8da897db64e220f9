/**
 * The webhook's signature: HMAC-SHA256 with the shared secret over `<timestamp>.<raw body>`, sent
 * as `X-Ledger-Signature: v1=<hex>` beside `X-Ledger-Timestamp: <unix seconds>` (the scheme of
 * Stripe and Standard Webhooks). The timestamp is signed with the body, so a receiver that refuses
 * old timestamps refuses replays. Pure; receivers in TypeScript may use `verifyWebhookSignature`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The headers of a delivery. */
export const WEBHOOK_HEADERS = {
  timestamp: 'x-ledger-timestamp',
  signature: 'x-ledger-signature',
  /** `<sink>:<first>-<last>`: the same for every try of a batch, for receivers that drop repeats by it. */
  delivery: 'x-ledger-delivery',
} as const;

/** How old a timestamp {@link verifyWebhookSignature} accepts by default, in seconds. */
export const SIGNATURE_TOLERANCE_S = 300;

/** `v1=<hex of HMAC-SHA256(secret, "<timestamp>.<body>")>`. */
export function signWebhook(input: { secret: string; timestamp: number; body: string }): string {
  const mac = createHmac('sha256', input.secret).update(`${input.timestamp}.${input.body}`).digest('hex');
  return `v1=${mac}`;
}

/**
 * Whether `signature` (the header's value: one or more `v1=<hex>`, comma-separated, as a sender
 * rotating its secret may send) signs `body` at `timestamp` with `secret`, and the timestamp is
 * within `toleranceS` of `nowS`. Compares in constant time.
 */
export function verifyWebhookSignature(input: {
  secret: string;
  timestamp: string;
  body: string;
  signature: string;
  nowS?: number;
  toleranceS?: number;
}): boolean {
  if (!/^\d{1,12}$/.test(input.timestamp)) return false;
  const timestamp = Number(input.timestamp);
  const nowS = input.nowS ?? Math.floor(Date.now() / 1000);
  if (Math.abs(nowS - timestamp) > (input.toleranceS ?? SIGNATURE_TOLERANCE_S)) return false;
  const expected = Buffer.from(signWebhook({ secret: input.secret, timestamp, body: input.body }));
  return input.signature
    .split(',')
    .map((part) => Buffer.from(part.trim()))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}
