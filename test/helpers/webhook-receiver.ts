/**
 * A webhook receiver on 127.0.0.1, port 0, for the sink tests: it checks each delivery's signature
 * as a receiver would, keeps the batches it acknowledged and every request it saw, and answers
 * from a script (200 by default).
 */
import type { FeedEvent } from '../../src/feed/feed-event.js';
import { verifyWebhookSignature, WEBHOOK_HEADERS } from '../../src/feed/sinks/webhook-signature.js';
import { type RecordedRequest, type ScriptedReply, startHttpServer } from './http-server.js';

/** A delivery as received. */
export interface ReceivedBatch {
  sink: string;
  first: number;
  last: number;
  events: FeedEvent[];
  /** The raw body, as signed. */
  body: string;
  timestamp: string;
  signature: string;
  delivery: string;
  /** Whether the signature held with the receiver's secret. */
  verified: boolean;
  /** The `authorization` header, when one came. */
  authorization: string | undefined;
  /** `performance.now()` at arrival. */
  at: number;
}

/** What to answer a delivery (the batch parsed, and how many came before it). */
export type ReceiverScript = (batch: ReceivedBatch, index: number) => ScriptedReply | Promise<ScriptedReply>;

/** A running receiver. */
export interface WebhookReceiver {
  url: string;
  /** Every delivery received, answered or not, in arrival order. */
  received: ReceivedBatch[];
  /** The deliveries answered 2xx. */
  acknowledged: ReceivedBatch[];
  /** The most deliveries of `sink` in progress at once. */
  mostAtOnce(sink: string): number;
  setScript(script: ReceiverScript): void;
  close(): Promise<void>;
}

/** Starts a receiver that verifies signatures with `secret`. */
export async function startWebhookReceiver(
  secret: string,
  script?: ReceiverScript,
): Promise<WebhookReceiver> {
  let answer: ReceiverScript = script ?? (() => ({ status: 200 }));
  const received: ReceivedBatch[] = [];
  const acknowledged: ReceivedBatch[] = [];
  const inProgress = new Map<string, number>();
  const most = new Map<string, number>();
  const server = await startHttpServer(async (request) => {
    const batch = parseDelivery(request, secret);
    const index = received.push(batch) - 1;
    const now = (inProgress.get(batch.sink) ?? 0) + 1;
    inProgress.set(batch.sink, now);
    most.set(batch.sink, Math.max(most.get(batch.sink) ?? 0, now));
    try {
      const reply = await answer(batch, index);
      // The wait happens here, so the delivery counts as in progress while it lasts.
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      const status = reply.status ?? 200;
      if (!reply.hang && !reply.destroy && status >= 200 && status < 300) acknowledged.push(batch);
      return { ...reply, delayMs: 0 };
    } finally {
      inProgress.set(batch.sink, (inProgress.get(batch.sink) ?? 1) - 1);
    }
  });
  return {
    url: `${server.baseUrl}/hooks/ledger`,
    received,
    acknowledged,
    mostAtOnce: (sink) => most.get(sink) ?? 0,
    setScript(next) {
      answer = next;
    },
    close: () => server.close(),
  };
}

function parseDelivery(request: RecordedRequest, secret: string): ReceivedBatch {
  const header = (name: string) => String(request.headers[name] ?? '');
  const parsed = JSON.parse(request.body) as {
    sink: string;
    first: number;
    last: number;
    events: FeedEvent[];
  };
  const timestamp = header(WEBHOOK_HEADERS.timestamp);
  const signature = header(WEBHOOK_HEADERS.signature);
  return {
    ...parsed,
    body: request.body,
    timestamp,
    signature,
    delivery: header(WEBHOOK_HEADERS.delivery),
    verified: verifyWebhookSignature({ secret, timestamp, body: request.body, signature }),
    authorization: request.headers.authorization,
    at: request.at,
  };
}

/** The positions of the events of `batches`, in order. */
export function positionsOf(batches: readonly ReceivedBatch[]): number[] {
  return batches.flatMap((b) => b.events.map((e) => e.position));
}
