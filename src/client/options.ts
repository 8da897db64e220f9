import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ACCOUNT_LIST_FORMS,
  type AccountListForm,
  type Config,
  ENV,
  LOOKUP_SPELLINGS,
  type LookupSpelling,
  PAGING_MODES,
  type PagingMode,
} from '../config.js';
import { KEY_COUNT, REQUEST_DEFAULTS } from '../defaults.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { packageRoot } from '../paths.js';
import { type EndpointName, resolvePaths, type ToolName } from './api-paths.js';
import type { ClientObserver } from './observer.js';
import type { RequestBudget } from './request-budget.js';

/** Options of `createLedgerClient`. Only `baseUrl` is required. */
export interface LedgerClientOptions {
  /** The service's base address, e.g. `https://api.example.org` (a path prefix is kept). */
  baseUrl: string;
  /**
   * Base address of the transaction lists and single-record look-ups (a deployment's explorer
   * host); `/info`, balances, fees, `POST /tx` and the Tools stay on `baseUrl`. Default `baseUrl`.
   */
  listUrl?: string | undefined;
  /**
   * Path templates by endpoint name, overriding the service's own spelling (and `lookups`), e.g.
   * `{ txsByHash: '/tx/{ledgerHash}', mintedTxByChainTxHash: '/minted/{chainTxHash}' }`.
   */
  paths?: Partial<Record<EndpointName, string>> | Record<string, string> | undefined;
  /**
   * Spelling of the single look-ups: `interface` (`/txsByHash/…`, `/mintedTxByChainTxHash/…`) or
   * `deployed` (`/tx/…`, `/minted/…`). Default `interface`.
   */
  lookups?: LookupSpelling | undefined;
  /**
   * How a key-paging account list is asked: `address` (`/txs?address=…`), `path`
   * (`/txs/{account}`), or `auto` (`address` first, the path form after a 404). Default `auto`.
   */
  accountLists?: AccountListForm | undefined;
  /**
   * Records asked per key-paging request when the query names no count; halved (not below 10)
   * while the service refuses it with 400 or 422, and the accepted count kept. Default 100.
   */
  pageCount?: number | undefined;
  /** The list dialect `listDialect()` answers: `key`, `page`, or `auto` (asks the service once). Default `auto`. */
  paging?: PagingMode | undefined;
  /**
   * Total deadline of one attempt, from sending the request to the last byte of the body (a
   * body trickling in slowly fails at the deadline and is retried). Default 10000 ms.
   */
  timeoutMs?: number | undefined;
  /**
   * Retries of a transient failure after the first try: network error, timeout, 5xx, 429, and a
   * 2xx body that is malformed, truncated or too large. One budget for all kinds. Default 5.
   */
  retries?: number | undefined;
  /** Backoff ceiling of the first retry; it doubles per retry. Default 200 ms. */
  retryMinMs?: number | undefined;
  /** Largest backoff delay. Default 10000 ms. */
  retryMaxMs?: number | undefined;
  /** Longest `Retry-After` waited for; a longer one fails the request at once (`RetryWaitTooLongError`). Default 120000 ms. */
  maxRetryWaitMs?: number | undefined;
  /**
   * Largest response body accepted, in bytes; a longer one is cut off at this size and retried
   * like a truncated body. Default 8388608 (8 MiB; a full page is a few kilobytes).
   */
  maxBodyBytes?: number | undefined;
  /**
   * Hedging of list pages: when a page's answer takes longer than this multiple of the recent
   * median page time (and at least `hedgeMinMs`), a second request for the same page is sent,
   * through the same request budget; the first answer wins and the other request is aborted.
   * At most about one page in ten is hedged. 0 = off; otherwise at least 1. Default 3.
   */
  hedgeAfter?: number | undefined;
  /** The shortest wait before a page is hedged, so fast answers are never doubled. Default 500 ms. */
  hedgeMinMs?: number | undefined;
  /**
   * Request budget shared by all calls of this client, retries and hedges included; 0 = unlimited.
   * A 429's `Retry-After` pauses it for every call. Default 50.
   */
  requestsPerSecond?: number | undefined;
  /** Requests that may go at once after a quiet spell. Default a twentieth of `requestsPerSecond`, at least 1 (`request-budget.ts` says why). */
  requestBurst?: number | undefined;
  /**
   * A budget to share with other clients of the same service (its limits count per client
   * address): in this process, or across processes like the workers' budget in Redis. Every
   * attempt takes from it, and a 429's `Retry-After` pauses it when it has `pause`. When given,
   * `requestsPerSecond` and `requestBurst` are not used.
   */
  budget?: RequestBudget | undefined;
  /** Keep-alive connections to the service at most. Default 16. */
  connections?: number | undefined;
  /**
   * The most list requests a walk keeps in flight (`inFlight()`); below it, the size follows the
   * budget × the measured answer time (`in-flight.ts`). Default 32.
   */
  maxInFlight?: number | undefined;
  /** HTTP method of each Tools endpoint (their methods are not documented). Default POST (JSON body). */
  toolMethods?: Partial<Record<ToolName, 'GET' | 'POST'>> | undefined;
  /** Told of every attempt (endpoint, outcome, duration), retry and rate-limit pause, for metrics. Default: none. */
  observer?: ClientObserver | undefined;
  /** Where retried failures are logged (`warn`). Default: silent. */
  logger?: Logger | undefined;
  /** `User-Agent` header. Default `ledger-indexer/<version>`. */
  userAgent?: string | undefined;
}

/** The options with every default applied and checked. */
export type ResolvedClientOptions = Required<
  Omit<LedgerClientOptions, 'paths' | 'logger' | 'requestBurst' | 'budget' | 'observer'>
> & {
  observer: ClientObserver | undefined;
  paths: Record<EndpointName, string>;
  logger: Logger | undefined;
  requestBurst: number | undefined;
  budget: RequestBudget | undefined;
};

/** The settings that apply to lists, where a deployment speaks the key dialect. */
function listOptionsFromConfig(config: Config): Partial<LedgerClientOptions> {
  return {
    listUrl: config.ledgerListUrl,
    lookups: config.ledgerLookups,
    accountLists: config.ledgerAccountLists,
    pageCount: config.ledgerPageCount,
    paging: config.ledgerPaging,
  };
}

/**
 * Client options from the process configuration (`LEDGER_BASE_URL`, `LEDGER_LIST_URL`,
 * `LEDGER_PATHS`, `LEDGER_LOOKUPS`, the key-paging settings, timeouts, retries, budget). Throws {@link ConfigError} naming the variable when the base URL is missing
 * or a path template is wrong.
 */
export function clientOptionsFromConfig(config: Config, logger?: Logger): LedgerClientOptions {
  if (config.ledgerBaseUrl === undefined) {
    throw new ConfigError(
      ENV.ledgerBaseUrl,
      'is required (the ledger service base URL, e.g. http://127.0.0.1:8080)',
    );
  }
  // Checked here to name the setting; applied over the look-up spelling by the client.
  resolvePaths(config.ledgerPaths, ENV.ledgerPaths);
  return {
    baseUrl: config.ledgerBaseUrl,
    ...listOptionsFromConfig(config),
    paths: config.ledgerPaths,
    timeoutMs: config.requestTimeoutMs,
    retries: config.retries,
    retryMinMs: config.retryMinMs,
    retryMaxMs: config.retryMaxMs,
    maxRetryWaitMs: config.maxRetryWaitMs,
    maxBodyBytes: config.maxBodyBytes,
    hedgeAfter: config.hedgeAfter,
    hedgeMinMs: config.hedgeMinMs,
    requestsPerSecond: config.requestsPerSecond,
    connections: Math.max(16, config.concurrency),
    maxInFlight: config.concurrency,
    logger,
  };
}

/** Applies defaults and checks values; a bad one is a {@link ConfigError} naming the option. */
export function resolveClientOptions(options: LedgerClientOptions): ResolvedClientOptions {
  checkBaseUrl('baseUrl', options.baseUrl);
  if (options.listUrl !== undefined) checkBaseUrl('listUrl', options.listUrl);
  const number = (
    name: keyof LedgerClientOptions,
    value: number | undefined,
    fallback: number,
    min: number,
  ) => {
    const result = value ?? fallback;
    if (typeof result !== 'number' || !Number.isFinite(result) || result < min) {
      throw new ConfigError(name, `must be a number >= ${min} (got ${String(value)})`);
    }
    return result;
  };
  const retryMinMs = number('retryMinMs', options.retryMinMs, REQUEST_DEFAULTS.retryMinMs, 0);
  const resolved: ResolvedClientOptions = {
    baseUrl: options.baseUrl,
    listUrl: options.listUrl ?? options.baseUrl,
    lookups: oneOf('lookups', options.lookups, LOOKUP_SPELLINGS),
    accountLists: oneOf('accountLists', options.accountLists, ACCOUNT_LIST_FORMS),
    paging: oneOf('paging', options.paging, PAGING_MODES),
    pageCount: Math.floor(number('pageCount', options.pageCount, KEY_COUNT, 1)),
    paths: resolvePaths(options.paths as Record<string, string> | undefined, 'paths', options.lookups),
    timeoutMs: number('timeoutMs', options.timeoutMs, REQUEST_DEFAULTS.timeoutMs, 1),
    retries: Math.floor(number('retries', options.retries, REQUEST_DEFAULTS.retries, 0)),
    retryMinMs,
    retryMaxMs: number(
      'retryMaxMs',
      options.retryMaxMs,
      Math.max(REQUEST_DEFAULTS.retryMaxMs, retryMinMs),
      retryMinMs,
    ),
    maxRetryWaitMs: number('maxRetryWaitMs', options.maxRetryWaitMs, REQUEST_DEFAULTS.maxRetryWaitMs, 0),
    maxBodyBytes: Math.floor(number('maxBodyBytes', options.maxBodyBytes, REQUEST_DEFAULTS.maxBodyBytes, 1)),
    hedgeAfter: number('hedgeAfter', options.hedgeAfter, REQUEST_DEFAULTS.hedgeAfter, 0),
    hedgeMinMs: number('hedgeMinMs', options.hedgeMinMs, REQUEST_DEFAULTS.hedgeMinMs, 0),
    requestsPerSecond: number(
      'requestsPerSecond',
      options.requestsPerSecond,
      REQUEST_DEFAULTS.requestsPerSecond,
      0,
    ),
    requestBurst:
      options.requestBurst === undefined ? undefined : number('requestBurst', options.requestBurst, 1, 1),
    budget: options.budget,
    observer: options.observer,
    connections: Math.floor(number('connections', options.connections, 16, 1)),
    maxInFlight: Math.floor(number('maxInFlight', options.maxInFlight, 32, 1)),
    toolMethods: options.toolMethods ?? {},
    logger: options.logger,
    userAgent: options.userAgent ?? defaultUserAgent(),
  };
  if (resolved.hedgeAfter > 0 && resolved.hedgeAfter < 1) {
    throw new ConfigError('hedgeAfter', `must be 0 (off) or a number >= 1 (got ${resolved.hedgeAfter})`);
  }
  return resolved;
}

/** A base address: an http(s) URL without query or fragment (a path prefix is kept). */
function checkBaseUrl(name: 'baseUrl' | 'listUrl', value: string): void {
  let base: URL;
  try {
    base = new URL(value);
  } catch {
    throw new ConfigError(name, `is not a valid URL (got '${value}')`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new ConfigError(name, 'must start with http:// or https://');
  }
  if (base.search || base.hash) throw new ConfigError(name, 'must not hold a query or fragment');
}

/** One of `values` (the first when unset); anything else is a {@link ConfigError} naming the option. */
function oneOf<T extends string>(
  name: keyof LedgerClientOptions,
  value: T | undefined,
  values: readonly T[],
): T {
  const result = value ?? values[0];
  if (result === undefined || !values.includes(result)) {
    throw new ConfigError(name, `must be one of ${values.join(', ')} (got '${String(value)}')`);
  }
  return result;
}

let userAgent: string | undefined;

function defaultUserAgent(): string {
  if (userAgent === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version?: string };
      userAgent = `ledger-indexer/${pkg.version ?? '0'}`;
    } catch {
      userAgent = 'ledger-indexer';
    }
  }
  return userAgent;
}
