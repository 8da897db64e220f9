import type { TxPage } from '../domain/model.js';
import type { Logger } from '../logger.js';
import { accountPathCandidates, fillPath, queryString, TOOL_NAMES, type ToolName } from './api-paths.js';
import type { TxListQuery } from './api-types.js';
import type { CallOptions, ToolCall } from './call-options.js';
import { createHedgePolicy } from './hedge-policy.js';
import { runHedged } from './hedged-call.js';
import { isNotFound } from './http.js';
import type { HttpTransport } from './http-types.js';
import { listQuery } from './list-query.js';
import type { ResolvedClientOptions } from './options.js';
import { parseTxPage } from './page.js';
import { parseToolAnswer } from './resources.js';

type Parse<T> = (text: string, url: string) => T;

/** The two ways the client's methods GET: plain, and hedged for list pages. */
export interface ClientGets {
  /** GETs `path`; `endpoint` names it for metrics. */
  get<T>(endpoint: string, path: string, parse: Parse<T>, call: CallOptions | undefined): Promise<T>;
  getPage<T>(endpoint: string, path: string, parse: Parse<T>, call: CallOptions | undefined): Promise<T>;
  /** Second requests sent for slow pages so far. */
  hedges(): number;
}

/** Creates the client's GETs over the transport. */
export function createClientGets(
  http: HttpTransport,
  resolved: Pick<ResolvedClientOptions, 'hedgeAfter' | 'hedgeMinMs'>,
  logger: Logger,
): ClientGets {
  // List pages are hedged: one slow answer would otherwise hold up a walk that commits in order.
  const hedgePolicy = createHedgePolicy({ after: resolved.hedgeAfter, minMs: resolved.hedgeMinMs });
  let hedges = 0;
  return {
    get: (endpoint, path, parse, call) =>
      http.send({ method: 'GET', endpoint, path, parse, signal: call?.signal }),
    getPage: (endpoint, path, parse, call) =>
      runHedged({
        policy: hedgePolicy,
        call: (signal) => http.send({ method: 'GET', endpoint, path, parse, signal }),
        signal: call?.signal,
        onHedge: (delayMs) => {
          hedges += 1;
          logger.debug(
            { path, after_ms: Math.round(delayMs) },
            'slow ledger page, requesting it a second time',
          );
        },
      }),
    hedges: () => hedges,
  };
}

/**
 * The account transaction list: on 404 the other path shape is tried, and the one that answers
 * is tried first from then on.
 */
export function createAccountLister(
  gets: ClientGets,
  configured: string,
  logger: Logger,
): (account: string, query?: TxListQuery, call?: CallOptions) => Promise<TxPage> {
  // The account-list spelling that answered last; tried first from then on.
  let accountTemplate: string | undefined;
  return async function txsByAccount(account, query = {}, call) {
    const qs = listQuery(query);
    const candidates = accountPathCandidates(accountTemplate ?? configured);
    let firstNotFound: unknown;
    for (const template of candidates) {
      try {
        const path = fillPath(template, { account }) + qs;
        const page = await gets.getPage('txsByAccount', path, parseTxPage, call);
        if (accountTemplate !== template) {
          if (template !== configured) {
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
  };
}

/** The seven Tools endpoints, each with its configured method (POST unless set). */
export function createTools(
  http: HttpTransport,
  gets: ClientGets,
  resolved: Pick<ResolvedClientOptions, 'paths' | 'toolMethods'>,
): Readonly<Record<ToolName, ToolCall>> {
  const { paths } = resolved;
  function tool(name: ToolName): ToolCall {
    return async (params = {}, call) => {
      const method = call?.method ?? resolved.toolMethods[name] ?? 'POST';
      const path = fillPath(paths[name]);
      if (method === 'GET') {
        const query: Record<string, string> = {};
        for (const [key, value] of Object.entries(params)) {
          if (value !== undefined) query[key] = typeof value === 'string' ? value : JSON.stringify(value);
        }
        return gets.get(name, path + queryString(query), parseToolAnswer, call);
      }
      return http.send({
        method: 'POST',
        endpoint: name,
        path,
        body: JSON.stringify(params),
        parse: parseToolAnswer,
        signal: call?.signal,
      });
    };
  }
  return Object.freeze(
    Object.fromEntries(TOOL_NAMES.map((name) => [name, tool(name)])) as Record<ToolName, ToolCall>,
  );
}
