import { Counter, Gauge, type Registry } from 'prom-client';
import type { FeedConsumers } from '../feed/feed-consumers.js';
import { METRIC_PREFIX } from './names.js';

/** What the feed's metrics read at each scrape: the process's feed, once it is open. */
export interface FeedMetricsSource {
  head(): number | null;
  consumers: FeedConsumers;
}

/** The change feed's metrics of one process; they read their values from the feed at each scrape. */
export interface FeedMetrics {
  /** The feed the metrics read from now on. */
  watch(source: FeedMetricsSource): void;
}

/**
 * The feed's head, its readers (live streams and polls, how far each named one is behind) and
 * what it sent: read from the feed's own counts when scraped, so serving costs nothing more.
 */
export function registerFeedMetrics(registry: Registry, processLabel: string): FeedMetrics {
  const registers = [registry];
  let source: FeedMetricsSource | undefined;
  const reported = { eventsSent: 0, cutOff: 0 };
  new Gauge({
    name: `${METRIC_PREFIX}feed_head_position`,
    help: 'The last change-feed position this process handed to its live readers.',
    labelNames: ['process'],
    registers,
    collect() {
      const head = source?.head();
      if (head !== null && head !== undefined) this.set({ process: processLabel }, head);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}feed_consumers`,
    help: 'Readers of the change feed connected to this process now, by mode (sse or poll).',
    labelNames: ['process', 'mode'],
    registers,
    collect() {
      if (source === undefined) return;
      const live = source.consumers.list().filter((c) => c.live);
      for (const mode of ['sse', 'poll'] as const) {
        this.set({ process: processLabel, mode }, live.filter((c) => c.mode === mode).length);
      }
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}feed_consumer_lag_positions`,
    help: 'How many positions each named feed reader (?consumer=) is behind the head.',
    labelNames: ['process', 'consumer'],
    registers,
    collect() {
      this.reset();
      const head = source?.head();
      if (source === undefined || head === null || head === undefined) return;
      for (const consumer of source.consumers.list()) {
        if (consumer.name === null) continue;
        this.set({ process: processLabel, consumer: consumer.name }, Math.max(0, head - consumer.position));
      }
    },
  });
  const counter = (key: keyof typeof reported, name: string, help: string) =>
    new Counter({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames: ['process'],
      registers,
      collect() {
        const now = source?.consumers.counts()[key] ?? reported[key];
        if (now > reported[key]) this.inc({ process: processLabel }, now - reported[key]);
        reported[key] = now;
      },
    });
  counter(
    'eventsSent',
    'feed_events_sent_total',
    'Change-feed events sent to readers (SSE streams and long polls).',
  );
  counter('cutOff', 'feed_clients_cut_off_total', 'SSE readers cut off for leaving their buffer unread.');
  return {
    watch(next) {
      source = next;
    },
  };
}
