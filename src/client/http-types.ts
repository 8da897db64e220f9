/** The HTTP transport's shapes: its options, a request, its counters and the transport itself. */
import type { Logger } from '../logger.js';
import type { ClientObserver } from './observer.js';
import type { RequestBudget } from './request-budget.js';
import type { AbortLike } from './stop-token.js';

/** Counters of one client since it was created. */
export interface ClientStats {
  /** Requests sent, retries included. */
  requests: number;
  /** Retries made after a transient failure. */
  retries: number;
  /** Answers received, by HTTP status (`"200"`, `"404"`, …). */
  byStatus: Record<string, number>;
  /** Requests that got no answer (refused, reset, …), timeouts excluded. */
  networkErrors: number;
  /** Requests whose answer, body included, was not complete within the timeout. */
  timeouts: number;
  /** 2xx answers whose body was not what the endpoint promises. */
  malformed: number;
  /** Answers cut off because their body grew past the size limit. */
  tooLarge: number;
  /** Second requests sent for a page whose answer was slow (each also counted in `requests`). */
  hedges: number;
  /**
   * List requests asked in the key dialect (`/txs?cursor=…`), the dialect probe and each count
   * halving included; their retries and hedges are counted in `retries` and `hedges` only.
   */
  keyRequests: number;
  /** List requests asked by page number (`/txs?page=…`, account lists); retries and hedges excluded. */
  pageRequests: number;
}

/** What a transport counts: the client adds the hedges and the list requests by dialect. */
export type TransportStats = Omit<ClientStats, 'hedges' | 'keyRequests' | 'pageRequests'>;

/** Settings of {@link createHttpTransport}; see `LedgerClientOptions` for their meaning and defaults. */
export interface HttpTransportOptions {
  baseUrl: string;
  timeoutMs: number;
  retries: number;
  retryMinMs: number;
  retryMaxMs: number;
  maxRetryWaitMs: number;
  maxBodyBytes: number;
  connections: number;
  userAgent: string;
  budget: RequestBudget;
  logger: Logger;
  /** Told of every attempt, retry and pause, for metrics. */
  observer?: ClientObserver | undefined;
}

/** One logical request; `send` may make several attempts of it. */
export interface HttpRequest<T> {
  method: 'GET' | 'POST';
  /** The endpoint's name (`txs`, `txsByHash`, …), for metrics. Default `other`. */
  endpoint?: string | undefined;
  /** Path and query relative to the base URL, already encoded. */
  path: string;
  /** A JSON text, for POST. */
  body?: string | undefined;
  /** Turns a 2xx body into the result; throws `MalformedResponseError` (retried) or another error (not). */
  parse: (bodyText: string, url: string) => T;
  /**
   * Whether repeating the request is harmless (default true). When false, only failures that
   * prove the service did not act are retried: 429, and a connection that was never made.
   */
  idempotent?: boolean | undefined;
  /** Stops every attempt, wait and retry; the request rejects with its reason. */
  signal?: AbortLike | undefined;
}

/** One request at a time, with timeout, status → error, budget and retries. */
export interface HttpTransport {
  send<T>(request: HttpRequest<T>): Promise<T>;
  stats(): TransportStats;
  /** Waits for requests in flight, then closes the connections. */
  close(): Promise<void>;
}
