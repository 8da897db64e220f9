/**
 * What a sink delivers, as plain data and pure functions: a page of the feed cut into bounded
 * batches of the events its filter lets through, a batch's JSON body, and the wait before a retry.
 */
import { type FeedEvent, type FeedFilter, matchesFilter } from '../feed-event.js';

/** The most one batch holds. */
export interface BatchBounds {
  maxEvents: number;
  /** Bytes of the batch's JSON body (an event bigger than this alone still goes, alone). */
  maxBytes: number;
}

/** Up to 100 events or 256 KiB of JSON a batch: small enough for any receiver's body limit. */
export const DEFAULT_BATCH_BOUNDS: BatchBounds = { maxEvents: 100, maxBytes: 256 * 1024 };

/** A batch: the events to deliver, and where the sink stands once they are delivered. */
export interface SinkBatch {
  /** Ascending; empty when nothing of its stretch passed the filter (the position still moves). */
  events: FeedEvent[];
  /** The position stored once delivered: its last event's, or the page's end for the last batch of a page. */
  through: number;
}

/** Bytes `first` and `last` may take beyond the `null`s of an empty batch's body (16 digits each). */
const POSITION_BYTES = 24;

/**
 * Cuts a page of the feed (its events, and the position it ends at) into batches of the events
 * that pass `filter`, each within `bounds`. The last batch ends at the page's end, so events the
 * filter left out after the last one passing it are passed with it; a page with none passing
 * gives one empty batch.
 */
export function batchesOf(
  page: { events: readonly FeedEvent[]; position: number },
  input: { filter: FeedFilter; bounds: BatchBounds; sink: string },
): SinkBatch[] {
  const { filter, bounds } = input;
  const batches: SinkBatch[] = [];
  const overhead = Buffer.byteLength(batchBody(input.sink, [])) + POSITION_BYTES;
  let events: FeedEvent[] = [];
  let bytes = overhead;
  for (const event of page.events) {
    if (!matchesFilter(event, filter)) continue;
    const size = Buffer.byteLength(JSON.stringify(event)) + 1;
    const last = events.at(-1);
    if (last !== undefined && (events.length >= bounds.maxEvents || bytes + size > bounds.maxBytes)) {
      batches.push({ events, through: last.position });
      events = [];
      bytes = overhead;
    }
    events.push(event);
    bytes += size;
  }
  batches.push({ events, through: page.position });
  return batches;
}

/**
 * The JSON body of a batch: `{ sink, first, last, events }`, `first` and `last` the positions of
 * its first and last event. The webhook POSTs it; a dead letter keeps it.
 */
export function batchBody(sink: string, events: readonly FeedEvent[]): string {
  return JSON.stringify({
    sink,
    first: events[0]?.position ?? null,
    last: events.at(-1)?.position ?? null,
    events,
  });
}

/** How a sink retries a batch its target failed to deliver. */
export interface SinkRetryPolicy {
  /** Tries of a batch before it is dead-lettered (the first included). */
  tries: number;
  /** The first wait; it doubles at each retry, up to `maxMs`. */
  minMs: number;
  maxMs: number;
}

/**
 * The wait before retry number `retry` (0 for the first): the ceiling doubles from `minMs` up to
 * `maxMs` and the wait is drawn from its upper half (jitter: sinks of many processes failing
 * together do not retry together). A `Retry-After` replaces it when longer, up to `maxMs`.
 */
export function retryDelayMs(
  retry: number,
  policy: SinkRetryPolicy,
  options: { retryAfterMs?: number | undefined; random?: number } = {},
): number {
  const ceiling = Math.min(policy.maxMs, policy.minMs * 2 ** Math.max(0, retry));
  const random = options.random ?? Math.random();
  const backoff = Math.round(ceiling / 2 + (random * ceiling) / 2);
  if (options.retryAfterMs === undefined) return backoff;
  return Math.max(backoff, Math.min(options.retryAfterMs, policy.maxMs));
}
