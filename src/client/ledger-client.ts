import { silentLogger } from '../logger.js';
import { createHedgePolicy } from './hedge-policy.js';
import { runHedged } from './hedged-call.js';
import { type ClientStats, createHttpTransport, isNotFound } from './http.js';
import { type LedgerClientOptions, resolveClientOptions } from './options.js';
import { parseSingleTx, parseTxKeyPage, parseTxPage } from './page.js';
import { accountPathCandidates, fillPath, queryString, TOOL_NAMES, type ToolName } from './paths.js';
import { createRequestBudget } from './request-budget.js';
import {
  parseAccountBalance,
  parseBalances,
  parseFees,
  parseInfo,
  parseOneFee,
  parseSubmitResult,
  parseToolAnswer,
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
  const get = <T>(path: string, parse: (text: string, url: string) => T, call: CallOptions | undefined) =>
    http.send({ method: 'GET', path, parse, signal: call?.signal });

  // List pages are hedged: one slow answer would otherwise hold up a walk that commits in order.
  const hedgePolicy = createHedgePolicy({ after: resolved.hedgeAfter, minMs: resolved.hedgeMinMs });
  let hedges = 0;
  const getPage = <T>(path: string, parse: (text: string, url: string) => T, call: CallOptions | undefined) =>
    runHedged({
      policy: hedgePolicy,
      call: (signal) => http.send({ method: 'GET', path, parse, signal }),
      signal: call?.signal,
      onHedge: (delayMs) => {
        hedges += 1;
        logger.debug(
          { path, after_ms: Math.round(delayMs) },
          'slow ledger page, requesting it a second time',
        );
      },
    });

  // The account-list spelling that answered last; tried first from then on.
  let accountTemplate: string | undefined;

  async function txsByAccount(account: string, query: TxListQuery = {}, call?: CallOptions): Promise<TxPage> {
    const qs = listQuery(query);
    const candidates = accountPathCandidates(accountTemplate ?? paths.txsByAccount);
    let firstNotFound: unknown;
    for (const template of candidates) {
      try {
        const page = await getPage(fillPath(template, { account }) + qs, parseTxPage, call);
        if (accountTemplate !== template) {
          if (template !== paths.txsByAccount) {
            logger.info(
              { path: template },
              'the service answers account lists at this path; using it from now on',
            );
          }
          accountTemplate = template;
        }
        return page;
      } catch (error) {
        if (!isNotFound(error)) throw error;
        firstNotFound ??= error;
      }
    }
    throw firstNotFound;
  }

  function tool(name: ToolName): ToolCall {
    return async (params = {}, call) => {
      const method = call?.method ?? resolved.toolMethods[name] ?? 'POST';
      const path = fillPath(paths[name]);
      if (method === 'GET') {
        const query: Record<string, string> = {};
        for (const [key, value] of Object.entries(params)) {
          if (value !== undefined) query[key] = typeof value === 'string' ? value : JSON.stringify(value);
        }
        return get(path + queryString(query), parseToolAnswer, call);
      }
      return http.send({
        method: 'POST',
        path,
        body: JSON.stringify(params),
        parse: parseToolAnswer,
        signal: call?.signal,
      });
    };
  }

  const tools = Object.freeze(
    Object.fromEntries(TOOL_NAMES.map((name) => [name, tool(name)])) as Record<ToolName, ToolCall>,
  );

  return {
    baseUrl: resolved.baseUrl,
    info: async (call) => get(fillPath(paths.info), parseInfo, call),
    balances: async (account, call) => get(fillPath(paths.balances, { account }), parseBalances, call),
    balance: async (tag, account, call) =>
      get(fillPath(paths.balance, { tag, account }), parseAccountBalance, call),
    fees: async (call) => get(fillPath(paths.fees), parseFees, call),
    fee: async (tag, call) => get(fillPath(paths.fee, { tag }), parseOneFee, call),
    txs: async (query = {}, call) => getPage(fillPath(paths.txs) + listQuery(query), parseTxPage, call),
    txsByAccount,
    txsByHash: async (ledgerHash, call) =>
      get(fillPath(paths.txsByHash, { ledgerHash }), parseSingleTx, call),
    mintedTxByChainTxHash: async (chainTxHash, call) =>
      get(fillPath(paths.mintedTxByChainTxHash, { chainTxHash }), parseSingleTx, call),
    submitTx: async (tx, call) =>
      http.send({
        method: 'POST',
        path: fillPath(paths.submitTx),
        body: JSON.stringify(tx),
        parse: parseSubmitResult,
        idempotent: false,
        signal: call?.signal,
      }),
    txsAfter: async (query, call) => {
      if (!Number.isSafeInteger(query.cursor) || query.cursor < 0) {
        throw new TypeError(`cursor must be a non-negative whole number (got ${query.cursor})`);
      }
      const count = query.count ?? 100;
      if (!Number.isSafeInteger(count) || count < 1) throw new TypeError(`count must be >= 1 (got ${count})`);
      const qs = queryString({
        cursor: query.cursor,
        order: 'asc',
        count,
        tokenTag: nonEmpty(query.tokenTag),
        action: nonEmpty(query.action),
        withoutAction: nonEmpty(query.withoutAction),
      });
      return getPage(fillPath(paths.txsAfter) + qs, parseTxKeyPage, call);
    },
    tools,
    stats: () => ({ ...http.stats(), hedges }),
    close: () => http.close(),
  };
}

/** The list query string; an empty filter is no filter, and `page` must be >= 1. */
function listQuery(query: TxListQuery): string {
  if (query.page !== undefined && (!Number.isSafeInteger(query.page) || query.page < 1)) {
    throw new TypeError(`page must be a whole number >= 1 (got ${query.page})`);
  }
  return queryString({
    page: query.page,
    tokenTag: nonEmpty(query.tokenTag),
    action: nonEmpty(query.action),
    withoutAction: nonEmpty(query.withoutAction),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
