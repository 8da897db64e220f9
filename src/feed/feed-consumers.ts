/**
 * Who reads the feed from this process, and how far each has got: the live Server-Sent Events
 * streams, and the long-poll readers that named themselves (`?consumer=`), remembered a while
 * after their last poll. For the status page and the metrics; plain data, no I/O.
 */
import type { FeedFilter } from './feed-event.js';

/** How long a named long-poll reader is shown after its last poll. */
export const POLL_CONSUMER_KEPT_MS = 10 * 60_000;

/** One reader of the feed as shown. */
export interface FeedConsumer {
  /** `?consumer=` as given, or `null` for an SSE stream that gave none. */
  name: string | null;
  mode: 'sse' | 'poll';
  /** Where the reader came from (the peer's address). */
  remote: string;
  filter: FeedFilter;
  /** The last position sent to it (SSE), or the position it asked after (a poll). */
  position: number;
  /** When it connected (SSE) or last polled. */
  since: Date;
  /** Still connected (an SSE stream, or a poll waiting for events). */
  live: boolean;
}

/** A live SSE stream's entry: moved on as frames are written, dropped when it ends. */
export interface FeedConsumerEntry {
  advance(position: number): void;
  end(): void;
}

/** The readers of this process's feed. */
export interface FeedConsumers {
  /** A stream starts; its entry follows it. */
  stream(input: {
    name: string | null;
    remote: string;
    filter: FeedFilter;
    position: number;
  }): FeedConsumerEntry;
  /** A named reader polled after `position`; the function answered marks its answer sent. */
  polled(input: { name: string; remote: string; filter: FeedFilter; position: number }): () => void;
  /** Every reader now, named polls seen within {@link POLL_CONSUMER_KEPT_MS} included, furthest behind first. */
  list(): FeedConsumer[];
  /** Live SSE streams now. */
  streams(): number;
  /** Events sent to SSE streams and long polls. */
  sent(events: number): void;
  /** Counts of what happened since start. */
  counts(): { eventsSent: number; cutOff: number };
  /** A slow SSE client was cut off. */
  cutOff(): void;
}

/** Creates the registry; `now` for tests. */
export function createFeedConsumers(now: () => number = Date.now): FeedConsumers {
  const streams = new Set<FeedConsumer>();
  const polls = new Map<string, FeedConsumer>();
  const counts = { eventsSent: 0, cutOff: 0 };
  return {
    stream(input) {
      const consumer: FeedConsumer = { ...input, mode: 'sse', since: new Date(now()), live: true };
      streams.add(consumer);
      return {
        advance: (position) => {
          consumer.position = Math.max(consumer.position, position);
        },
        end: () => void streams.delete(consumer),
      };
    },
    polled(input) {
      const consumer: FeedConsumer = { ...input, mode: 'poll', since: new Date(now()), live: true };
      polls.set(input.name, consumer);
      return () => {
        consumer.live = false;
      };
    },
    list() {
      const horizon = now() - POLL_CONSUMER_KEPT_MS;
      for (const [name, consumer] of polls) {
        if (!consumer.live && consumer.since.getTime() < horizon) polls.delete(name);
      }
      return [...streams, ...polls.values()]
        .map((consumer) => ({ ...consumer, filter: { ...consumer.filter } }))
        .sort((a, b) => a.position - b.position);
    },
    streams: () => streams.size,
    sent(events) {
      counts.eventsSent += events;
    },
    cutOff() {
      counts.cutOff += 1;
    },
    counts: () => ({ ...counts }),
  };
}
