import { silentLogger } from '../logger.js';
import { type ClientStats, createHttpTransport } from './http.js';
import { createAccountLister, createClientGets, createTools } from './ledger-calls.js';
import { keyPageQuery, listQuery } from './list-query.js';
import { type LedgerClientOptions, resolveClientOptions } from './options.js';
import { parseSingleTx, parseTxKeyPage, parseTxPage } from './page.js';
import { fillPath, type ToolName } from './paths.js';
import { createRequestBudget } from './request-budget.js';
import {
  parseAccountBalance,
  parseBalances,
  parseFees,
  parseInfo,
  parseOneFee,
  parseSubmitResult,
} from './resources.js';
import type {
  LedgerAccountBalance,
  LedgerBalances,
  LedgerFee,
  LedgerInfo,
  LedgerTx,
  SubmitTxResult,
  TxKeyPage,
  TxListFilter,
  TxListQuery,
  TxPage,
} from './types.js';

/** Per-call options of every client method. */
export interface CallOptions {
  /** Aborts the call, its waits and its retries; the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** Per-call options of a Tools call. */
export interface ToolCallOptions extends CallOptions {
  /** Overrides the tool's configured method: GET sends `params` as a query, POST as a JSON body. */
  method?: 'GET' | 'POST' | undefined;
}

/** Key paging request: records after `cursor` (a `rawId`), ascending. */
export interface TxsAfterQuery extends TxListFilter {
  /** The last `rawId` already seen; 0 to start from the beginning. */
  cursor: number;
  /** Records wanted; default 100. */
  count?: number | undefined;
}

/** A Tools endpoint: generic, since its parameters and answer are not documented. */
export type ToolCall = (params?: Record<string, unknown>, options?: ToolCallOptions) => Promise<unknown>;

/**
 * The typed client of the ledger service: one method per endpoint the service offers.
 * Errors: `HttpError` (non-2xx; `isNotFound(err)` for 404), `NetworkError`/`TimeoutError`,
 * `MalformedResponseError` (after retries), `InvalidRecordError` (single look-ups).
 */
export interface LedgerClient {
  /** The base URL the client talks to. */
  readonly baseUrl: string;
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
  /** Key paging (`GET /txs?cursor=…&order=asc&count=…`), on deployments that offer it. */
  txsAfter(query: TxsAfterQuery, options?: CallOptions): Promise<TxKeyPage>;
  /** The seven Tools endpoints. */
  readonly tools: Readonly<Record<ToolName, ToolCall>>;
  /** Counters since creation: requests, retries, hedges, answers by status. */
  stats(): ClientStats;
  /** Waits for calls in flight, then closes the connections. */
  close(): Promise<void>;
}

/** Creates a client; it holds a keep-alive connection pool until {@link LedgerClient.close}. */
export function createLedgerClient(options: LedgerClientOptions): LedgerClient {
  const resolved = resolveClientOptions(options);
  const { paths } = resolved;
  const logger = resolved.logger ?? silentLogger();
  const http = createHttpTransport({
    ...resolved,
    logger,
    budget:
      resolved.budget ??
      createRequestBudget({ requestsPerSecond: resolved.requestsPerSecond, burst: resolved.requestBurst }),
  });
  const gets = createClientGets(http, resolved, logger);
  const { get, getPage } = gets;
  return {
    baseUrl: resolved.baseUrl,
    info: async (call) => get('info', fillPath(paths.info), parseInfo, call),
    balances: async (account, call) =>
      get('balances', fillPath(paths.balances, { account }), parseBalances, call),
    balance: async (tag, account, call) =>
      get('balance', fillPath(paths.balance, { tag, account }), parseAccountBalance, call),
    fees: async (call) => get('fees', fillPath(paths.fees), parseFees, call),
    fee: async (tag, call) => get('fee', fillPath(paths.fee, { tag }), parseOneFee, call),
    txs: async (query = {}, call) =>
      getPage('txs', fillPath(paths.txs) + listQuery(query), parseTxPage, call),
    txsByAccount: createAccountLister(gets, paths.txsByAccount, logger),
    txsByHash: async (ledgerHash, call) =>
      get('txsByHash', fillPath(paths.txsByHash, { ledgerHash }), parseSingleTx, call),
    mintedTxByChainTxHash: async (chainTxHash, call) =>
      get(
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
    txsAfter: async (query, call) =>
      getPage('txsAfter', fillPath(paths.txsAfter) + keyPageQuery(query), parseTxKeyPage, call),
    tools: createTools(http, gets, resolved),
    stats: () => ({ ...http.stats(), hedges: gets.hedges() }),
    close: () => http.close(),
  };
}
