import type { KeyAnswerText, LedgerTx, TxListFilter, TxPage } from '../domain/model.js';
import { type Logger, silentLogger } from '../logger.js';
import { fillPath, type ToolName } from './api-paths.js';
import type {
  LedgerAccountBalance,
  LedgerBalances,
  LedgerFee,
  LedgerInfo,
  ListDialect,
  SubmitTxResult,
  TxKeyPage,
  TxKeyQuery,
  TxListQuery,
} from './api-types.js';
import type { CallOptions, ToolCall } from './call-options.js';
import { createHttpTransport } from './http.js';
import type { ClientStats, HttpTransport, TransportStats } from './http-types.js';
import { createInFlightTarget } from './in-flight.js';
import { createDialectProbe, createKeyLister } from './key-lists.js';
import { type ClientGets, createAccountLister, createClientGets, createTools } from './ledger-calls.js';
import { listQuery } from './list-query.js';
import type { ClientObserver } from './observer.js';
import { type LedgerClientOptions, type ResolvedClientOptions, resolveClientOptions } from './options.js';
import { parseSingleTx, parseTxPage } from './page.js';
import { createRequestBudget } from './request-budget.js';
import {
  parseAccountBalance,
  parseBalances,
  parseFees,
  parseInfo,
  parseOneFee,
  parseSubmitResult,
} from './resources.js';

/** Key paging request of {@link LedgerClient.txsAfter}: records after `cursor` (a `rawId`), ascending. */
export interface TxsAfterQuery extends TxListFilter {
  /** The last `rawId` already seen; 0 to start from the beginning. */
  cursor: number;
  /** Records wanted. Default: the client's accepted count (`keyCount()`, 100 unless set). */
  count?: number | undefined;
}

/**
 * The typed client of the ledger service: one method per endpoint the service offers.
 * Errors: `HttpError` (non-2xx; `isNotFound(err)` for 404), `NetworkError`/`TimeoutError`,
 * `MalformedResponseError` (after retries), `InvalidRecordError` (single look-ups).
 */
export interface LedgerClient {
  /** The base URL of `/info`, balances, fees, `POST /tx` and the Tools. */
  readonly baseUrl: string;
  /** The base URL of the lists and single look-ups (`baseUrl` unless set). */
  readonly listUrl: string;
  /** `GET /info`: the token list and the ledger's top-level facts. */
  info(options?: CallOptions): Promise<LedgerInfo>;
  /** `GET /balances/{account}`. */
  balances(account: string, options?: CallOptions): Promise<LedgerBalances>;
  /** `GET /balance/{tag}/{account}`. */
  balance(tag: string, account: string, options?: CallOptions): Promise<LedgerAccountBalance>;
  /** `GET /fees`. */
  fees(options?: CallOptions): Promise<LedgerFee[]>;
  /** `GET /fee/{tag}`. */
  fee(tag: string, options?: CallOptions): Promise<LedgerFee>;
  /** `GET /txs`: one page of all transactions, newest first; bad records in `rejected`. */
  txs(query?: TxListQuery, options?: CallOptions): Promise<TxPage>;
  /**
   * `GET /txsByAccount/{account}` (or `/txs/{account}`): one page of an account's transactions.
   * On 404 the other path shape is tried, and the one that works is used from then on.
   */
  txsByAccount(account: string, query?: TxListQuery, options?: CallOptions): Promise<TxPage>;
  /** `GET /txsByHash/{ledgerHash}`: one record; 404 when unknown. */
  txsByHash(ledgerHash: string, options?: CallOptions): Promise<LedgerTx>;
  /** `GET /mintedTxByChainTxHash/{chainTxHash}`: the mint of a source-chain transaction; 404 when unknown. */
  mintedTxByChainTxHash(chainTxHash: string, options?: CallOptions): Promise<LedgerTx>;
  /** `POST /tx`: submits a signed transaction. Retried only when the service surely did not act. */
  submitTx(tx: Record<string, unknown>, options?: CallOptions): Promise<SubmitTxResult>;
  /**
   * Key paging, the deployed dialect: `GET /txs?cursor=…&order=…&count=…` (an account's list as
   * `/txs?address=…` or `/txs/{account}`). A count refused with 400 or 422 is halved (not below
   * 10) and the accepted one kept; the page may hold fewer records than asked while
   * `hasNextPage` is true: go on from its last `rawId`.
   */
  txsByKey(query: TxKeyQuery, options?: CallOptions): Promise<TxKeyPage>;
  /**
   * {@link LedgerClient.txsByKey} of a list other than an account's, as text and a guess of its
   * last rawId and `hasNextPage`, for a reader that parses it on another thread.
   */
  txsTextByKey(query: Omit<TxKeyQuery, 'account'>, options?: CallOptions): Promise<KeyAnswerText>;
  /** The count a key request asks when its query names none. */
  keyCount(): number;
  /**
   * List requests a walk keeps in flight now: the budget × the measured answer time, backed off
   * on refusals and timeouts, at most `maxInFlight` (`in-flight.ts`); for answers of `records`
   * records (default 100; 10 by page number).
   */
  inFlight(records?: number): number;
  /** `txsByKey({ ...query, order: 'asc' })`: the records after `cursor`, ascending. */
  txsAfter(query: TxsAfterQuery, options?: CallOptions): Promise<TxKeyPage>;
  /**
   * One request, `GET /txs?order=desc&count=1`: `key` when the answer has a boolean
   * `hasNextPage` and no numeric `totalPages`, `page` when it has a numeric `totalPages`;
   * anything else is a `MalformedResponseError`.
   */
  detectPaging(options?: CallOptions): Promise<ListDialect>;
  /** The configured dialect (`paging`); with `auto`, {@link LedgerClient.detectPaging}'s answer, kept once known. */
  listDialect(options?: CallOptions): Promise<ListDialect>;
  /** With `LEDGER_PAGING=auto`: the dialect is known from an earlier run; `listDialect` asks nothing. */
  rememberDialect(dialect: ListDialect): void;
  /** The seven Tools endpoints. */
  readonly tools: Readonly<Record<ToolName, ToolCall>>;
  /** Counters since creation: requests, retries, hedges, answers by status, list requests by dialect. */
  stats(): ClientStats;
  /** Waits for calls in flight, then closes the connections. */
  close(): Promise<void>;
}

/** Creates a client; it holds keep-alive connection pools (one per host) until {@link LedgerClient.close}. */
export function createLedgerClient(options: LedgerClientOptions): LedgerClient {
  const resolved = resolveClientOptions(options);
  const { paths } = resolved;
  const logger = resolved.logger ?? silentLogger();
  const inFlight = createInFlightTarget({
    requestsPerSecond: resolved.requestsPerSecond,
    ceiling: resolved.maxInFlight,
  });
  const hosts = openHosts(
    { ...resolved, observer: withAttempts(resolved.observer, inFlight.observer) },
    logger,
  );
  const { http, gets, listGets } = hosts;
  const counts = { key: 0, page: 0 };
  const keyGets = countedPages(listGets, () => (counts.key += 1));
  const pageGets = countedPages(listGets, () => (counts.page += 1));
  const keys = createKeyLister({ ...resolved, gets: keyGets, logger });
  const probe = createDialectProbe(listGets, paths, resolved.paging, () => (counts.key += 1));
  return {
    baseUrl: resolved.baseUrl,
    listUrl: resolved.listUrl,
    info: async (call) => gets.get('info', fillPath(paths.info), parseInfo, call),
    balances: async (account, call) =>
      gets.get('balances', fillPath(paths.balances, { account }), parseBalances, call),
    balance: async (tag, account, call) =>
      gets.get('balance', fillPath(paths.balance, { tag, account }), parseAccountBalance, call),
    fees: async (call) => gets.get('fees', fillPath(paths.fees), parseFees, call),
    fee: async (tag, call) => gets.get('fee', fillPath(paths.fee, { tag }), parseOneFee, call),
    txs: async (query = {}, call) =>
      pageGets.getPage('txs', fillPath(paths.txs) + listQuery(query), parseTxPage, call),
    txsByAccount: createAccountLister(pageGets, paths.txsByAccount, logger),
    txsByHash: async (ledgerHash, call) =>
      listGets.get('txsByHash', fillPath(paths.txsByHash, { ledgerHash }), parseSingleTx, call),
    mintedTxByChainTxHash: async (chainTxHash, call) =>
      listGets.get(
        'mintedTxByChainTxHash',
        fillPath(paths.mintedTxByChainTxHash, { chainTxHash }),
        parseSingleTx,
        call,
      ),
    submitTx: async (tx, call) =>
      http.send({
        method: 'POST',
        endpoint: 'submitTx',
        path: fillPath(paths.submitTx),
        body: JSON.stringify(tx),
        parse: parseSubmitResult,
        idempotent: false,
        signal: call?.signal,
      }),
    txsByKey: (query, call) => keys.txsByKey(query, call),
    txsTextByKey: (query, call) => keys.txsTextByKey(query, call),
    keyCount: () => keys.keyCount(),
    inFlight: (records) => inFlight.size(records),
    txsAfter: async (query, call) => {
      if (!Number.isSafeInteger(query.cursor) || query.cursor < 0) {
        throw new TypeError(`cursor must be a non-negative whole number (got ${query.cursor})`);
      }
      return keys.txsByKey({ ...query, order: 'asc' }, call);
    },
    detectPaging: (call) => probe.detectPaging(call),
    listDialect: (call) => probe.listDialect(call),
    rememberDialect: (dialect) => probe.rememberDialect(dialect),
    tools: createTools(http, gets, resolved),
    stats: () => ({ ...hosts.stats(), keyRequests: counts.key, pageRequests: counts.page }),
    close: () => hosts.close(),
  };
}

/** The transports and GETs of the main host and the list host (one and the same when their URLs are). */
interface Hosts {
  http: HttpTransport;
  gets: ClientGets;
  listGets: ClientGets;
  stats(): TransportStats & { hedges: number };
  close(): Promise<void>;
}

function openHosts(resolved: ResolvedClientOptions, logger: Logger): Hosts {
  // One budget for both hosts: the service's rate limits count per client address.
  const budget =
    resolved.budget ??
    createRequestBudget({ requestsPerSecond: resolved.requestsPerSecond, burst: resolved.requestBurst });
  const http = createHttpTransport({ ...resolved, logger, budget });
  const gets = createClientGets(http, resolved, logger);
  if (resolved.listUrl === resolved.baseUrl) {
    return {
      http,
      gets,
      listGets: gets,
      stats: () => ({ ...http.stats(), hedges: gets.hedges() }),
      close: () => http.close(),
    };
  }
  const listHttp = createHttpTransport({ ...resolved, baseUrl: resolved.listUrl, logger, budget });
  const listGets = createClientGets(listHttp, resolved, logger);
  return {
    http,
    gets,
    listGets,
    stats: () => ({ ...sumStats(http.stats(), listHttp.stats()), hedges: gets.hedges() + listGets.hedges() }),
    close: async () => {
      await Promise.all([http.close(), listHttp.close()]);
    },
  };
}

function sumStats(a: TransportStats, b: TransportStats): TransportStats {
  const byStatus = { ...a.byStatus };
  for (const [status, n] of Object.entries(b.byStatus)) byStatus[status] = (byStatus[status] ?? 0) + n;
  return {
    requests: a.requests + b.requests,
    retries: a.retries + b.retries,
    byStatus,
    networkErrors: a.networkErrors + b.networkErrors,
    timeouts: a.timeouts + b.timeouts,
    malformed: a.malformed + b.malformed,
    tooLarge: a.tooLarge + b.tooLarge,
  };
}

/** `gets` whose list pages are counted by `count` (once per page asked; retries and hedges not). */
function countedPages(gets: ClientGets, count: () => void): ClientGets {
  return {
    ...gets,
    getPage: (endpoint, path, parse, call) => {
      count();
      return gets.getPage(endpoint, path, parse, call);
    },
  };
}

/** `observer` that also tells `attempts` of every attempt (the in-flight size learns from them). */
function withAttempts(
  observer: ClientObserver | undefined,
  attempts: Pick<ClientObserver, 'attempt'>,
): ClientObserver {
  if (observer === undefined) {
    return { attempt: attempts.attempt, retry: () => {}, rateLimitPause: () => {}, budgetWait: () => {} };
  }
  return {
    attempt(endpoint, outcome, seconds) {
      observer.attempt(endpoint, outcome, seconds);
      attempts.attempt(endpoint, outcome, seconds);
    },
    retry: (endpoint) => observer.retry(endpoint),
    rateLimitPause: (seconds) => observer.rateLimitPause(seconds),
    budgetWait: (seconds) => observer.budgetWait(seconds),
  };
}
