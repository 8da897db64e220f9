import { Pool } from 'undici';
import {
  HttpError,
  LedgerIndexerError,
  MalformedResponseError,
  NetworkError,
  ResponseTooLargeError,
  TimeoutError,
} from '../errors.js';

import type { HttpRequest, HttpTransportOptions, TransportStats } from './http-types.js';
import type { AttemptOutcome } from './observer.js';
import { parseRetryAfter } from './retry-after.js';
import { type AbortLike, StopToken } from './stop-token.js';

/** The transport's counters: the client adds the hedges. */
export type TransportCounters = TransportStats;

/** What every attempt of a transport shares: its settings, connection pool and counters. */
export interface TransportState {
  readonly options: HttpTransportOptions;
  readonly pool: Pool;
  /** The base URL's path, without trailing slashes, put before every request's path. */
  readonly prefix: string;
  /** The base URL as errors and logs show it: never the credentials it may carry. */
  readonly shownBase: string;
  readonly headers: Record<string, string>;
  readonly postHeaders: Record<string, string>;
  readonly counters: TransportCounters;
}

/** An answer of any status, its body read in full. */
interface RawAnswer {
  status: number;
  text: string;
  retryAfter: string | string[] | undefined;
}

const ERROR_BODY_LIMIT = 2000;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const TOO_LARGE_CODE = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';
const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);
const PROGRAMMER_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'UND_ERR_INVALID_RETURN_VALUE',
]);

/** Opens the keep-alive connection pool to the base URL's origin, with zeroed counters. */
export function openTransportState(options: HttpTransportOptions): TransportState {
  const base = new URL(options.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
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
    // them): each attempt has a total deadline of its own instead, in sendWithDeadline.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: Math.min(options.timeoutMs, 10_000) },
    // undici counts the bytes as they arrive and cuts the connection past the limit, so a body
    // that never ends cannot fill the memory.
    maxResponseSize: options.maxBodyBytes,
  });
  const counters: TransportCounters = {
    requests: 0,
    retries: 0,
    byStatus: {},
    networkErrors: 0,
    timeouts: 0,
    malformed: 0,
    tooLarge: 0,
  };
  return { options, pool, prefix, shownBase: `${base.origin}${prefix}`, headers, postHeaders, counters };
}

/** One attempt of a request: waits for the budget, sends, and turns the answer into the result. */
export async function attempt<T>(state: TransportState, request: HttpRequest<T>, url: string): Promise<T> {
  const { observer } = state.options;
  if (observer === undefined) {
    await state.options.budget.take(request.signal);
    state.counters.requests += 1;
    return readAnswer(state, request, url, await sendWithDeadline(state, request, url));
  }
  const waitFrom = performance.now();
  await state.options.budget.take(request.signal);
  const sentAt = performance.now();
  observer.budgetWait((sentAt - waitFrom) / 1000);
  state.counters.requests += 1;
  const endpoint = request.endpoint ?? 'other';
  try {
    const result = await readAnswer(state, request, url, await sendWithDeadline(state, request, url));
    observer.attempt(endpoint, 'ok', (performance.now() - sentAt) / 1000);
    return result;
  } catch (error) {
    const outcome = request.signal?.aborted ? 'aborted' : attemptOutcome(error);
    observer.attempt(endpoint, outcome, (performance.now() - sentAt) / 1000);
    throw error;
  }
}

/** The outcome of a failed attempt, by the error's type and status. */
function attemptOutcome(error: unknown): AttemptOutcome {
  if (error instanceof HttpError) {
    if (error.status === 404) return 'not_found';
    if (error.status === 429) return 'rate_limited';
    return error.status >= 500 ? 'server_error' : 'client_error';
  }
  if (error instanceof TimeoutError) return 'timeout';
  if (error instanceof ResponseTooLargeError) return 'too_large';
  if (error instanceof NetworkError) return 'network_error';
  if (error instanceof MalformedResponseError) return 'malformed';
  return 'aborted';
}

/** Sends the request and reads the whole body within one deadline, started once the budget let it go. */
async function sendWithDeadline(
  state: TransportState,
  request: HttpRequest<unknown>,
  url: string,
): Promise<RawAnswer> {
  const outer = request.signal;
  const stop = new StopToken();
  let pastDeadline = false;
  const timer = setTimeout(() => {
    pastDeadline = true;
    stop.abort(undefined);
  }, state.options.timeoutMs);
  const onOuterAbort = (): void => stop.abort(outer?.reason);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  try {
    if (outer?.aborted) throw outer.reason;
    const response = await state.pool.request({
      path: state.prefix + request.path,
      method: request.method,
      headers: request.method === 'POST' ? state.postHeaders : state.headers,
      body: request.body,
      signal: stop,
    });
    const status = response.statusCode;
    const retryAfter = response.headers['retry-after'];
    const text = await response.body.text();
    return { status, text, retryAfter };
  } catch (error) {
    throw classify(state, error, url, outer, pastDeadline);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
  }
}

/** Counts the answer's status; a non-2xx becomes an `HttpError`, a 2xx body is parsed. */
async function readAnswer<T>(
  state: TransportState,
  request: HttpRequest<T>,
  url: string,
  answer: RawAnswer,
): Promise<T> {
  const { status, text, retryAfter } = answer;
  const { counters } = state;
  counters.byStatus[status] = (counters.byStatus[status] ?? 0) + 1;
  if (status < 200 || status > 299) {
    const body = text.length > ERROR_BODY_LIMIT ? `${text.slice(0, ERROR_BODY_LIMIT)}…` : text;
    const error = new HttpError({ status, body, url, retryAfterMs: parseRetryAfter(retryAfter) });
    if (status === 429) await pauseBudget(state.options, error.retryAfterMs, url);
    throw error;
  }
  try {
    return request.parse(text, url);
  } catch (error) {
    if (error instanceof MalformedResponseError) counters.malformed += 1;
    throw error;
  }
}

/** Turns what a failed send threw into the client's typed error, counting it. */
function classify(
  state: TransportState,
  error: unknown,
  url: string,
  outer: AbortLike | undefined,
  pastDeadline: boolean,
) {
  if (outer?.aborted) return outer.reason;
  const { counters, options } = state;
  const code = (error as { code?: unknown } | null)?.code;
  if (pastDeadline || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
    counters.timeouts += 1;
    return new TimeoutError(url, `no complete answer within ${options.timeoutMs} ms`, error);
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

/**
 * A 429's `Retry-After` holds back every request that takes from the budget (every worker, for
 * a budget shared in Redis), not only the refused request's retry.
 */
async function pauseBudget(
  options: Pick<HttpTransportOptions, 'budget' | 'maxRetryWaitMs' | 'logger' | 'observer'>,
  retryAfterMs: number | undefined,
  url: string,
): Promise<void> {
  const { budget } = options;
  if (retryAfterMs === undefined || retryAfterMs <= 0 || budget.pause === undefined) return;
  try {
    const pauseMs = Math.min(retryAfterMs, options.maxRetryWaitMs);
    await budget.pause(pauseMs);
    options.observer?.rateLimitPause(pauseMs / 1000);
  } catch (error) {
    // The refused request's own retry still waits for Retry-After; only the others may go early.
    options.logger.warn({ url, err: error }, 'could not pause the request budget');
  }
}
