import pRetry from 'p-retry';
import { Pool } from 'undici';
import {
  HttpError,
  isRetryable,
  LedgerIndexerError,
  MalformedResponseError,
  NetworkError,
  TimeoutError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import type { RequestBudget } from './request-budget.js';
import { parseRetryAfter, retryDelayMs } from './retry-after.js';

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
  /** Requests that took longer than the timeout. */
  timeouts: number;
  /** 2xx answers whose body was not what the endpoint promises. */
  malformed: number;
}

/** Settings of {@link createHttpTransport}; see `LedgerClientOptions` for their meaning and defaults. */
export interface HttpTransportOptions {
  baseUrl: string;
  timeoutMs: number;
  retries: number;
  retryMinMs: number;
  retryMaxMs: number;
  retryAfterCapMs: number;
  malformedRetries: number;
  connections: number;
  userAgent: string;
  budget: RequestBudget;
  logger: Logger;
}

/** One logical request; `send` may make several attempts of it. */
export interface HttpRequest<T> {
  method: 'GET' | 'POST';
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
  signal?: AbortSignal | undefined;
}

/** One request at a time, with timeout, status → error, budget and retries. */
export interface HttpTransport {
  send<T>(request: HttpRequest<T>): Promise<T>;
  stats(): ClientStats;
  /** Waits for requests in flight, then closes the connections. */
  close(): Promise<void>;
}

/** Whether an error is the service's "not found" (HTTP 404). */
export function isNotFound(error: unknown): error is HttpError {
  return error instanceof HttpError && error.status === 404;
}

const ERROR_BODY_LIMIT = 2000;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN']);
const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);
const PROGRAMMER_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'UND_ERR_INVALID_RETURN_VALUE',
]);

/** Creates the transport over one keep-alive connection pool to the base URL's origin. */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const base = new URL(options.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  // What errors and logs show: never the credentials a base URL may carry.
  const shownBase = `${base.origin}${prefix}`;
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': options.userAgent };
  if (base.username || base.password) {
    const credentials = `${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`;
    headers['authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`;
  }
  const postHeaders = { ...headers, 'content-type': 'application/json' };
  const pool = new Pool(base.origin, {
    connections: options.connections,
    pipelining: 1,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: { timeout: Math.min(options.timeoutMs, 10_000) },
  });
  const counters: ClientStats = {
    requests: 0,
    retries: 0,
    byStatus: {},
    networkErrors: 0,
    timeouts: 0,
    malformed: 0,
  };
  const { logger, budget, timeoutMs } = options;

  async function attempt<T>(request: HttpRequest<T>, url: string): Promise<T> {
    await budget.take(request.signal);
    counters.requests += 1;
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      // The timeout is the pool's headersTimeout/bodyTimeout: undici's own coarse timers, far
      // cheaper on the hot path than an AbortController and a timer per request.
      const response = await pool.request({
        path: prefix + request.path,
        method: request.method,
        headers: request.method === 'POST' ? postHeaders : headers,
        body: request.body,
        signal: request.signal,
      });
      status = response.statusCode;
      retryAfter = response.headers['retry-after'];
      text = await response.body.text();
    } catch (error) {
      throw classify(error, url, request.signal);
    }
    counters.byStatus[status] = (counters.byStatus[status] ?? 0) + 1;
    if (status < 200 || status > 299) {
      const body = text.length > ERROR_BODY_LIMIT ? `${text.slice(0, ERROR_BODY_LIMIT)}…` : text;
      throw new HttpError({ status, body, url, retryAfterMs: parseRetryAfter(retryAfter) });
    }
    try {
      return request.parse(text, url);
    } catch (error) {
      if (error instanceof MalformedResponseError) counters.malformed += 1;
      throw error;
    }
  }

  function classify(error: unknown, url: string, outer: AbortSignal | undefined) {
    if (outer?.aborted) return outer.reason;
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
      counters.timeouts += 1;
      return new TimeoutError(url, `no answer within ${timeoutMs} ms`, error);
    }
    if (typeof code === 'string' && CLOSED_CODES.has(code)) {
      return new LedgerIndexerError('the ledger client is closed', { cause: error });
    }
    if (typeof code === 'string' && PROGRAMMER_CODES.has(code)) return error;
    counters.networkErrors += 1;
    const message = error instanceof Error ? error.message : String(error);
    return new NetworkError(
      url,
      `request failed: ${typeof code === 'string' ? `${code} ` : ''}${message}`,
      error,
    );
  }

  function worthRetrying(error: unknown, idempotent: boolean): boolean {
    if (!isRetryable(error)) return false;
    if (idempotent) return true;
    if (error instanceof HttpError) return error.status === 429;
    if (error instanceof NetworkError && !(error instanceof TimeoutError)) {
      const code = (error.cause as { code?: unknown } | undefined)?.code;
      return typeof code === 'string' && NOT_SENT_CODES.has(code);
    }
    return false;
  }

  /**
   * Decides whether to retry after failed attempt number `attempt` (1-based), and if so logs it
   * and waits. The delay is ours rather than p-retry's so that a Retry-After replaces the backoff
   * instead of adding to it, and so the log can say how long the wait is.
   */
  async function beforeRetry(
    request: HttpRequest<unknown>,
    url: string,
    state: { malformed: number },
    failure: { error: unknown; attempt: number },
  ): Promise<boolean> {
    const { error, attempt: attemptNumber } = failure;
    if (!worthRetrying(error, request.idempotent ?? true)) return false;
    if (error instanceof MalformedResponseError && ++state.malformed > options.malformedRetries) return false;
    const delayMs = retryDelayMs({
      retry: attemptNumber - 1,
      minMs: options.retryMinMs,
      maxMs: options.retryMaxMs,
      retryAfterMs: error instanceof HttpError ? error.retryAfterMs : undefined,
      retryAfterCapMs: options.retryAfterCapMs,
    });
    counters.retries += 1;
    logger.warn(
      {
        url,
        status: error instanceof HttpError ? error.status : undefined,
        attempt: attemptNumber,
        delay_ms: delayMs,
        error: error instanceof Error ? error.name : typeof error,
        message: error instanceof Error ? error.message : String(error),
      },
      'ledger request failed, retrying',
    );
    if (delayMs > 0) await sleep(delayMs, request.signal);
    return true;
  }

  /** Attempts 2 and later, run by p-retry once the first attempt has failed with `first`. */
  async function retry<T>(request: HttpRequest<T>, url: string, first: unknown): Promise<T> {
    const state = { malformed: 0 };
    if (options.retries === 0 || !(await beforeRetry(request, url, state, { error: first, attempt: 1 }))) {
      throw first;
    }
    return pRetry(() => attempt(request, url), {
      retries: options.retries - 1,
      minTimeout: 0,
      signal: request.signal,
      shouldRetry: ({ error, attemptNumber }) =>
        beforeRetry(request, url, state, { error, attempt: attemptNumber + 1 }),
    });
  }

  return {
    send<T>(request: HttpRequest<T>): Promise<T> {
      const url = shownBase + request.path;
      // The first attempt runs bare: a page that comes back fine, the hot path, pays nothing
      // for the retry machinery.
      return attempt(request, url).catch((error: unknown) => retry(request, url, error));
    },
    stats() {
      return { ...counters, byStatus: { ...counters.byStatus } };
    },
    async close() {
      if (!pool.closed) await pool.close();
    },
  };
}

/** Waits `ms`; an abort rejects with the signal's own reason. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
