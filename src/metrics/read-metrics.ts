import { Counter, Histogram, type Registry } from 'prom-client';
import { METRIC_PREFIX } from './names.js';

/** What the read API reports of each answer it gives. */
export interface ReadObserver {
  /** An answer of `route` (its path template, e.g. `/txs/{account}`) with `status`, after `seconds`. */
  answered(route: string, status: number, seconds: number): void;
}

/** The read API's counters: answers by route and status, and how long they took. */
export function registerReadMetrics(registry: Registry, processLabel: string): ReadObserver {
  const registers = [registry];
  const answers = new Counter({
    name: `${METRIC_PREFIX}read_api_requests_total`,
    help: "Requests the read API (the service's query endpoints served from the mirror) answered, by route and HTTP status.",
    labelNames: ['process', 'route', 'status'],
    registers,
  });
  const durations = new Histogram({
    name: `${METRIC_PREFIX}read_api_request_duration_seconds`,
    help: 'Time the read API took to answer a request, database reads included, by route.',
    labelNames: ['process', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  return {
    answered(route, status, seconds) {
      answers.inc({ process: processLabel, route, status: String(status) });
      durations.observe({ process: processLabel, route }, seconds);
    },
  };
}
