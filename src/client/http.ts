import pRetry from 'p-retry';
import { Pool } from 'undici';
import {
  HttpError,
  isRetryable,
  LedgerIndexerError,
  MalformedResponseError,
  NetworkError,
  ResponseTooLargeError,
  TimeoutError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import type { RequestBudget } from './request-budget.js';
import { parseRetryAfter, retryDelayMs } from './retry-after.js';
import { type AbortLike, StopToken, sleep } from './stop-token.js';

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
}

/** Settings of {@link createHttpTransport}; see `LedgerClientOptions` for their meaning and defaults. */
export interface HttpTransportOptions {
  baseUrl: string;
  timeoutMs: number;
  retries: number;
  retryMinMs: number;
  retryMaxMs: number;
  retryAfterCapMs: number;
  maxBodyBytes: number;
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
  /** Stops every attempt, wait and retry; the request rejects with its reason. */
  signal?: AbortLike | undefined;
}

/** One request at a time, with timeout, status → error, budget and retries. */
export interface HttpTransport {
  send<T>(request: HttpRequest<T>): Promise<T>;
  stats(): Omit<ClientStats, 'hedges'>;
  /** Waits for requests in flight, then closes the connections. */
  close(): Promise<void>;
}

/** Whether an error is the service's "not found" (HTTP 404). */
export function isNotFound(error: unknown): error is HttpError {
  return error instanceof HttpError && error.status === 404;
}

const ERROR_BODY_LIMIT = 2000;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const TOO_LARGE_CODE = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN']);
const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);
const PROGRAMMER_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'UND_ERR_INVALID_RETURN_VALUE',
]);

/**
 * A 429's `Retry-After` holds back every request that takes from the budget (every worker, for
 * a budget shared in Redis), not only the refused request's retry.
 */
async function pauseBudget(
  options: Pick<HttpTransportOptions, 'budget' | 'retryAfterCapMs' | 'logger'>,
  retryAfterMs: number | undefined,
  url: string,
): Promise<void> {
  const { budget } = options;
  if (retryAfterMs === undefined || retryAfterMs <= 0 || budget.pause === undefined) return;
  try {
    await budget.pause(Math.min(retryAfterMs, options.retryAfterCapMs));
  } catch (error) {
    // The refused request's own retry still waits for Retry-After; only the others may go early.
    options.logger.warn({ url, err: error }, 'could not pause the request budget');
  }
}

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
    // undici's own timeouts are idle timeouts (a body trickling a byte now and then never trips
    // them): each attempt has a total deadline of its own instead, below.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: Math.min(options.timeoutMs, 10_000) },
    // undici counts the bytes as they arrive and cuts the connection past the limit, so a body
    // that never ends cannot fill the memory.
    maxResponseSize: options.maxBodyBytes,
  });
  const counters: Omit<ClientStats, 'hedges'> = {
    requests: 0,
    retries: 0,
    byStatus: {},
    networkErrors: 0,
    timeouts: 0,
    malformed: 0,
    tooLarge: 0,
  };
  const { logger, budget, timeoutMs } = options;

  async function attempt<T>(request: HttpRequest<T>, url: string): Promise<T> {
    await budget.take(request.signal);
    counters.requests += 1;
    const outer = request.signal;
    // One deadline for the whole attempt, body included, started once the budget let it go.
    const stop = new StopToken();
    let pastDeadline = false;
    const timer = setTimeout(() => {
      pastDeadline = true;
      stop.abort(undefined);
    }, timeoutMs);
    const onOuterAbort = (): void => stop.abort(outer?.reason);
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      if (outer?.aborted) throw outer.reason;
      const response = await pool.request({
        path: prefix + request.path,
        method: request.method,
        headers: request.method === 'POST' ? postHeaders : headers,
        body: request.body,
        signal: stop,
      });
      status = response.statusCode;
      retryAfter = response.headers['retry-after'];
      text = await response.body.text();
    } catch (error) {
      throw classify(error, url, outer, pastDeadline);
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    }
    counters.byStatus[status] = (counters.byStatus[status] ?? 0) + 1;
    if (status < 200 || status > 299) {
      const body = text.length > ERROR_BODY_LIMIT ? `${text.slice(0, ERROR_BODY_LIMIT)}…` : text;
      const error = new HttpError({ status, body, url, retryAfterMs: parseRetryAfter(retryAfter) });
      if (status === 429) await pauseBudget(options, error.retryAfterMs, url);
      throw error;
    }
    try {
      return request.parse(text, url);
    } catch (error) {
      if (error instanceof MalformedResponseError) counters.malformed += 1;
      throw error;
    }
  }

  function classify(error: unknown, url: string, outer: AbortLike | undefined, pastDeadline: boolean) {
    if (outer?.aborted) return outer.reason;
    const code = (error as { code?: unknown } | null)?.code;
    if (pastDeadline || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
      counters.timeouts += 1;
      return new TimeoutError(url, `no complete answer within ${timeoutMs} ms`, error);
    }
    if (code === TOO_LARGE_CODE) {
      counters.tooLarge += 1;
      return new ResponseTooLargeError(url, options.maxBodyBytes);
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
    failure: { error: unknown; attempt: number },
  ): Promise<boolean> {
    const { error, attempt: attemptNumber } = failure;
    if (request.signal?.aborted) throw request.signal.reason;
    if (!worthRetrying(error, request.idempotent ?? true)) return false;
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

  /**
   * Attempts 2 and later, run by p-retry once the first attempt has failed with `first`. The
   * signal is honoured by each step (budget wait, attempt, backoff, the check before a retry),
   * which also covers the client's own stop tokens that p-retry's `signal` would not take.
   */
  async function retry<T>(request: HttpRequest<T>, url: string, first: unknown): Promise<T> {
    if (options.retries === 0 || !(await beforeRetry(request, url, { error: first, attempt: 1 }))) {
      throw first;
    }
    return pRetry(() => attempt(request, url), {
      retries: options.retries - 1,
      minTimeout: 0,
      shouldRetry: ({ error, attemptNumber }) =>
        beforeRetry(request, url, { error, attempt: attemptNumber + 1 }),
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
