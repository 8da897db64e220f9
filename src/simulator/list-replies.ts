import { isKeyQueryError, type KeyLimits, parseKeyQuery, parsePage } from '../service-query/key-query.js';
import { tokenIndexesOf } from '../service-query/token-tags.js';
import type { RecordFaults } from './faults.js';
import { joinJson } from './json-bytes.js';
import type { SimulatedLedger } from './ledger.js';
import { actionCode } from './list-index.js';
import { json, type Reply } from './reply.js';

/** One list request: the ledger, the query, and the account named in the path (if any). */
export interface ListRequest {
  ledger: SimulatedLedger;
  params: URLSearchParams;
  /** The account of `/txs/{account}` or `/txsByAccount/{account}`; undefined for `/txs`. */
  account: string | undefined;
  faults: RecordFaults;
}

const bad = (error: string): Reply => json(400, { error });

/** `action` and `withoutAction` as codes; an empty value is no filter. */
function actionFilter(params: URLSearchParams): { action?: number; withoutAction?: number } {
  const action = params.get('action');
  const withoutAction = params.get('withoutAction');
  return {
    ...(action ? { action: actionCode(action) } : {}),
    ...(withoutAction ? { withoutAction: actionCode(withoutAction) } : {}),
  };
}

/**
 * The interface document's dialect: page `page` (default 1) of 10 records, newest first,
 * `{accid?, currentPage, totalPages, txs}`. `tokenTag` is one tag; `address` is not known here.
 */
export function pageListReply(req: ListRequest): Reply {
  const { ledger, params, account } = req;
  const page = parsePage(params.get('page'));
  if (page === undefined) return bad('err_invalid_page');
  const tokenTag = params.get('tokenTag');
  const view = ledger.list({
    ...(account !== undefined ? { account } : {}),
    ...(tokenTag ? { tokens: [ledger.tokens.findIndex((t) => t.tag === tokenTag)] } : {}),
    ...actionFilter(params),
  });
  const slice = ledger.page(view, page, req.faults);
  const head = account === undefined ? '{' : `{"accid":${JSON.stringify(account)},`;
  return {
    status: 200,
    body: joinJson(
      `${head}"currentPage":${slice.currentPage},"totalPages":${slice.totalPages},"txs":[`,
      slice.texts,
      ']}',
    ),
  };
}

/**
 * The deployed key dialect: `{txs, hasNextPage}` in the order asked. The account is the path's,
 * else `address`; `tokenTag` may list several tags, comma-separated. `page` means nothing here.
 */
export function keyListReply(req: ListRequest, limits: KeyLimits): Reply {
  const { ledger, params } = req;
  const query = parseKeyQuery(params, limits);
  if (isKeyQueryError(query)) return bad(query.error);
  const account = req.account ?? (params.get('address') || undefined);
  const tokenTag = params.get('tokenTag');
  const tags = ledger.tokens.map((t) => t.tag);
  const view = ledger.list({
    ...(account !== undefined ? { account } : {}),
    ...(tokenTag ? { tokens: tokenIndexesOf(tokenTag, tags) } : {}),
    ...actionFilter(params),
  });
  const slice = ledger.keyPage(view, { ...query, faults: req.faults });
  return { status: 200, body: joinJson('{"txs":[', slice.texts, `],"hasNextPage":${slice.hasNextPage}}`) };
}
