/**
 * The simulator's digest (`GET /_sim/digest`), fetched over the same transport as the service's
 * endpoints: a total deadline, retries of transient failures, a body size limit.
 */
import type { MirrorDigest, RangeDigest, ResolvedDigestQuery } from '../digest/range-digest.js';
import { MalformedResponseError } from '../errors.js';
import { type Logger, silentLogger } from '../logger.js';
import { queryString } from './api-paths.js';
import { createHttpTransport } from './http.js';
import { resolveClientOptions } from './options.js';
import { parseJsonObject } from './page.js';
import { createRequestBudget } from './request-budget.js';

/** Options of {@link createSimDigestClient}. */
export interface SimDigestClientOptions {
  /** The simulator's base address. */
  baseUrl: string;
  /**
   * Deadline of one request attempt, body included (`verify --against` passes
   * `LEDGER_REQUEST_TIMEOUT_MS`). Default 600000 ms.
   */
  timeoutMs?: number | undefined;
  /** Retries of a transient failure. Default 5. */
  retries?: number | undefined;
  /** First backoff delay before a retry. Default: the client's (200 ms). */
  retryMinMs?: number | undefined;
  /** Largest backoff delay. Default: the client's (10000 ms). */
  retryMaxMs?: number | undefined;
  /** Longest `Retry-After` honoured. Default: the client's (60000 ms). */
  maxRetryWaitMs?: number | undefined;
  logger?: Logger | undefined;
}

/** Asks a simulator for digests of its ground truth. */
export interface SimDigestClient {
  digest(
    query: ResolvedDigestQuery,
    options?: { lines?: boolean; signal?: AbortSignal },
  ): Promise<MirrorDigest>;
  close(): Promise<void>;
}

/** A digest of 100,000 ranges is about 12 MB. */
const MAX_DIGEST_BYTES = 256 * 1024 * 1024;

export function createSimDigestClient(options: SimDigestClientOptions): SimDigestClient {
  const resolved = resolveClientOptions({
    baseUrl: options.baseUrl,
    timeoutMs: options.timeoutMs ?? 600_000,
    retries: options.retries,
    retryMinMs: options.retryMinMs,
    retryMaxMs: options.retryMaxMs,
    maxRetryWaitMs: options.maxRetryWaitMs,
    maxBodyBytes: MAX_DIGEST_BYTES,
    requestsPerSecond: 0,
    connections: 2,
  });
  const http = createHttpTransport({
    ...resolved,
    logger: options.logger ?? silentLogger(),
    budget: createRequestBudget({ requestsPerSecond: 0 }),
  });
  return {
    digest(query, call = {}) {
      const params = queryString({
        from: query.from,
        to: query.to ?? undefined,
        rangeSize: query.rangeSize,
        lines: call.lines ? 1 : undefined,
      });
      return http.send({
        method: 'GET',
        path: `/_sim/digest${params}`,
        parse: parseDigest,
        signal: call.signal,
      });
    },
    close: () => http.close(),
  };
}

/** Checks the answer's shape; anything else is a {@link MalformedResponseError}. */
export function parseDigest(bodyText: string, url: string): MirrorDigest {
  const body = parseJsonObject(bodyText, url);
  const bad = (what: string) => new MalformedResponseError(url, `digest ${what}`, bodyText);
  const { rangeSize, from, to, count, hash, ranges } = body;
  if (!isWhole(rangeSize) || !isWhole(from) || !(to === null || isWhole(to)) || !isWhole(count))
    throw bad('bounds or count missing');
  if (typeof hash !== 'string' || !Array.isArray(ranges)) throw bad('hash or ranges missing');
  return { rangeSize, from, to, count, hash, ranges: ranges.map((range) => parseRange(range, bad)) };
}

function parseRange(value: unknown, bad: (what: string) => Error): RangeDigest {
  if (typeof value !== 'object' || value === null) throw bad('range is not an object');
  const { from, to, count, hash, lines } = value as Record<string, unknown>;
  if (!isWhole(from) || !isWhole(to) || !isWhole(count) || typeof hash !== 'string')
    throw bad('range without from, to, count or hash');
  const range: RangeDigest = { from, to, count, hash };
  if (lines !== undefined) {
    if (!Array.isArray(lines) || !lines.every(isCanonicalLine))
      throw bad('range lines are not canonical lines');
    range.lines = lines;
  }
  return range;
}

function isWhole(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A JSON array whose first value is a rawId. */
function isCanonicalLine(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) && isWhole(parsed[0]);
  } catch {
    return false;
  }
}
