import { Counter, collectDefaultMetrics, Histogram, type Registry } from 'prom-client';
import type { ClientObserver } from '../client/observer.js';
import type { WriteCounts } from '../sync/ports/sync-store.js';
import { METRIC_PREFIX } from './names.js';

/** What the store wrappers tell as pages and re-reads are committed. */
export interface WriteObserver {
  /**
   * A commit of `stream` ended: `pages` list pages (0 for re-reads, reported as the stream
   * `rereads`) and what happened to their records.
   */
  written(stream: string, pages: number, counts: WriteCounts): void;
}

const WRITE_KINDS = ['inserted', 'updated', 'unchanged', 'rejected', 'conflicts'] as const;

/** The list endpoints of the client, by dialect. */
const LIST_DIALECTS: Readonly<Record<string, 'page' | 'key'>> = {
  txs: 'page',
  txsByAccount: 'page',
  txsByKey: 'key',
  txsByKeyAccount: 'key',
  detectPaging: 'key',
};

/**
 * The counters of this process: its requests to the ledger service and its writes. Every series
 * carries `process` (host:pid), so the counters of several workers stay apart and add up in
 * Prometheus (`sum without (process, instance)`).
 */
export function registerProcessMetrics(
  registry: Registry,
  processLabel: string,
): { client: ClientObserver; writes: WriteObserver } {
  const p = { process: processLabel };
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX, labels: p });
  const registers = [registry];
  const attempts = new Counter({
    name: `${METRIC_PREFIX}service_requests_total`,
    help: 'Requests sent to the ledger service (every attempt: retries and hedges included), by endpoint and outcome.',
    labelNames: ['process', 'endpoint', 'outcome'],
    registers,
  });
  const durations = new Histogram({
    name: `${METRIC_PREFIX}service_request_duration_seconds`,
    help: 'Time from sending a request to the ledger service to the last byte of its answer (budget wait excluded).',
    labelNames: ['process', 'endpoint'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const listRequests = new Counter({
    name: `${METRIC_PREFIX}requests_total`,
    help: 'List requests to the ledger service (every attempt), by dialect: page numbers, or by key (the deployed dialect, a hundred records a request).',
    labelNames: ['process', 'dialect'],
    registers,
  });
  const retries = new Counter({
    name: `${METRIC_PREFIX}service_retries_total`,
    help: 'Retries of a failed request to the ledger service (network, timeout, 5xx, 429, malformed body).',
    labelNames: ['process', 'endpoint'],
    registers,
  });
  const pauses = new Counter({
    name: `${METRIC_PREFIX}rate_limit_pauses_total`,
    help: "429 answers whose Retry-After paused every request of the budget (all workers' for the shared one).",
    labelNames: ['process'],
    registers,
  });
  const pausedSeconds = new Counter({
    name: `${METRIC_PREFIX}rate_limit_pause_seconds_total`,
    help: 'Seconds of Retry-After pauses asked for by 429 answers.',
    labelNames: ['process'],
    registers,
  });
  const budgetWait = new Counter({
    name: `${METRIC_PREFIX}request_budget_wait_seconds_total`,
    help: 'Seconds requests waited for the request budget (LEDGER_REQUESTS_PER_SECOND) before they could be sent.',
    labelNames: ['process'],
    registers,
  });
  const pages = new Counter({
    name: `${METRIC_PREFIX}pages_written_total`,
    help: 'List pages committed to the database, by stream.',
    labelNames: ['process', 'stream'],
    registers,
  });
  const records = new Counter({
    name: `${METRIC_PREFIX}records_written_total`,
    help: 'Records committed, by stream and kind (inserted, updated, unchanged, rejected, conflicts); re-reads count as stream "rereads".',
    labelNames: ['process', 'stream', 'kind'],
    registers,
  });
  // Zeroed series exist from the start, so rate() sees the first increase.
  pauses.inc(p, 0);
  pausedSeconds.inc(p, 0);
  budgetWait.inc(p, 0);
  return {
    client: {
      attempt(endpoint, outcome, seconds) {
        attempts.inc({ ...p, endpoint, outcome });
        const dialect = LIST_DIALECTS[endpoint];
        if (dialect !== undefined) listRequests.inc({ ...p, dialect });
        durations.observe({ ...p, endpoint }, seconds);
      },
      retry: (endpoint) => retries.inc({ ...p, endpoint }),
      rateLimitPause(seconds) {
        pauses.inc(p);
        pausedSeconds.inc(p, seconds);
      },
      budgetWait(seconds) {
        if (seconds > 0) budgetWait.inc(p, seconds);
      },
    },
    writes: {
      written(stream, pageCount, counts) {
        if (pageCount > 0) pages.inc({ ...p, stream }, pageCount);
        for (const kind of WRITE_KINDS) records.inc({ ...p, stream, kind }, counts[kind]);
      },
    },
  };
}
