/**
 * How many list requests one process keeps in flight: enough to spend the request budget at the
 * distance the service is measured at, no more. At 200 ms an answer, one request at a time uses a
 * tenth of a budget of 50 a second; ten at a time use all of it. Sized from what the client sees
 * (Little's law: in flight = rate × answer time), and backed off when the service refuses or
 * stops answering, as Ponder's transports do (−5 % on a refusal, +5 % on a success back up).
 *
 * Without a budget (or with one the machine cannot spend), the machine is the limit: each answer
 * costs the process and its database a few milliseconds, and requests in flight beyond what hides
 * the distance only hold memory (near the service, 32 lanes by key took 486 MB and were no faster
 * than 3). So the size is also capped at what hides the shortest answer time seen behind that
 * local work: the floor, and one more for each answer's worth of {@link LOCAL_RECORD_SECONDS}.
 */
import type { AttemptOutcome, ClientObserver } from './observer.js';

/** The in-flight size a walk reads before each request it may add. */
export interface InFlightTarget {
  /**
   * Requests to keep in flight now, for answers of `records` records (default 100, by key; 10 by
   * page number, whose answers cost the machine a tenth): at least 1, at most the ceiling.
   */
  size(records?: number): number;
  /** The answer time the size is taken from, seconds (the first list answer's until then; null before). */
  answerSeconds(): number | null;
}

/** Options of {@link createInFlightTarget}. */
export interface InFlightOptions {
  /** The request budget, requests a second; 0 = unlimited (the machine's pace alone sizes it). */
  requestsPerSecond: number;
  /** The most requests in flight (`LEDGER_CONCURRENCY`). */
  ceiling: number;
  /** The fewest a walk runs while nothing is refused: where local work, not the distance, is the limit. Default 2. */
  floor?: number | undefined;
}

/** Endpoints whose answers size the window: the lists, which the walks read. */
const LIST_ENDPOINTS = new Set(['txs', 'txsByAccount', 'txsByKey']);
/** Weight of each new answer time in the running mean: about the last twenty answers count. */
const ANSWER_WEIGHT = 0.05;
/**
 * In flight beyond the bare product, so the budget never waits on an answer a little slower than
 * the mean: a quarter more, plus one.
 */
const HEADROOM = 1.25;
/**
 * The machine's time for one record, process and database together (a 200,000-record `sync` by
 * key on two cores: about 8 ms an answer of a hundred). Requests to keep the machine busy while
 * an answer travels: its answer time ÷ this × the records an answer holds.
 */
const LOCAL_RECORD_SECONDS = 0.00008;
/** How fast the shortest answer time seen drifts up to newer ones: a service that moves away is followed. */
const SHORTEST_DRIFT = 0.01;
/** The factor a refusal or a timeout takes off, and the one a success gives back (up to 1). */
const BACK_OFF = 0.95;
const CREEP_UP = 1.05;
/** The back-off never goes below this share of the size. */
const MIN_SCALE = 0.05;

/**
 * The in-flight size for one client, with the observer that feeds it. The observer takes every
 * attempt's outcome and duration (the wait for the budget excluded: it is not the distance).
 */
export function createInFlightTarget(options: InFlightOptions): InFlightTarget & {
  observer: Pick<ClientObserver, 'attempt'>;
} {
  const ceiling = Math.max(1, Math.floor(options.ceiling));
  const floor = Math.min(ceiling, Math.max(1, Math.floor(options.floor ?? 2)));
  const rate = options.requestsPerSecond;
  let meanSeconds: number | null = null;
  let shortestSeconds: number | null = null;
  let scale = 1;
  const wanted = (records: number): number => {
    if (meanSeconds === null || shortestSeconds === null) return floor;
    const machine = floor + Math.ceil(shortestSeconds / (LOCAL_RECORD_SECONDS * Math.max(1, records)));
    const budget = rate > 0 ? Math.ceil(rate * meanSeconds * HEADROOM) + 1 : Number.POSITIVE_INFINITY;
    return Math.max(floor, Math.min(machine, budget));
  };
  return {
    size: (records = 100) => Math.max(1, Math.min(ceiling, Math.round(wanted(records) * scale))),
    answerSeconds: () => meanSeconds,
    observer: {
      attempt(endpoint: string, outcome: AttemptOutcome, seconds: number) {
        if (!LIST_ENDPOINTS.has(endpoint)) return;
        if (outcome === 'rate_limited' || outcome === 'timeout') {
          scale = Math.max(MIN_SCALE, scale * BACK_OFF);
          return;
        }
        if (outcome !== 'ok') return;
        scale = Math.min(1, scale * CREEP_UP);
        meanSeconds = meanSeconds === null ? seconds : meanSeconds + ANSWER_WEIGHT * (seconds - meanSeconds);
        shortestSeconds =
          shortestSeconds === null || seconds < shortestSeconds
            ? seconds
            : shortestSeconds + SHORTEST_DRIFT * (seconds - shortestSeconds);
      },
    },
  };
}
