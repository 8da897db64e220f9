import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import type { ClientObserver } from '../client/observer.js';
import { type FeedMetrics, registerFeedMetrics } from './feed-metrics.js';
import { registerProcessMetrics, type WriteObserver } from './process-metrics.js';
import { type ReadObserver, registerReadMetrics } from './read-metrics.js';
import { registerStateMetrics, type StateMetrics } from './state-metrics.js';

export type { FeedMetrics, FeedMetricsSource } from './feed-metrics.js';
export { METRIC_PREFIX, REREAD_STREAM } from './names.js';
export type { WriteObserver } from './process-metrics.js';
export type { ReadObserver } from './read-metrics.js';
export type { FeedGaugeValues, QueueGaugeValues, StateSnapshot, StreamGaugeValues } from './state-metrics.js';

/**
 * Every metric of one process, in its own registry (no global state: tests make several). The
 * client and the stores are handed `client` and `writes`, small interfaces; the HTTP surface
 * sets `state` from the database before each scrape.
 */
export interface Metrics {
  registry: Registry;
  client: ClientObserver;
  writes: WriteObserver;
  /** Handed to the read API: its answers by route and status. */
  reads: ReadObserver;
  /** The change feed's head, readers and what it sent, read from the feed at each scrape. */
  feed: FeedMetrics;
  state: StateMetrics;
  /** The Prometheus text of every metric. */
  text(): Promise<string>;
  contentType: string;
}

/** The `process` label of this process's counters: `host:pid`. */
export function processLabel(): string {
  return `${hostname()}:${process.pid}`;
}

/** Creates the registry with the process, client, write, read API, feed and state metrics. */
export function createMetrics(options: { process?: string } = {}): Metrics {
  const registry = new Registry();
  const label = options.process ?? processLabel();
  const { client, writes } = registerProcessMetrics(registry, label);
  const reads = registerReadMetrics(registry, label);
  const feed = registerFeedMetrics(registry, label);
  const state = registerStateMetrics(registry);
  return {
    registry,
    client,
    writes,
    reads,
    feed,
    state,
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
