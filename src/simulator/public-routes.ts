import type { TokenDef } from './catalog.js';
import type { RecordFaults } from './faults.js';
import type { SimulatedLedger } from './ledger.js';
import { actionCode } from './list-index.js';
import { createRng } from './random.js';

/** An answer ready to send. */
export interface Reply {
  status: number;
  body: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

/** A matched public route: its name (for stats) and how to answer it. */
export interface PublicRoute {
  name: string;
  /** `POST /tx` needs the body; the others answer at once. */
  needsBody: boolean;
  answer(body: unknown): Reply;
}

/** What the public routes need besides the ledger. */
export interface PublicRouteContext {
  ledger: SimulatedLedger;
  keyPaging: boolean;
  /** The record faults in force (malformed and tampered shares). */
  recordFaults(): RecordFaults;
  submit(body: unknown): Reply;
}

export const json = (status: number, value: unknown): Reply => ({ status, body: JSON.stringify(value) });
export const notFound = (): Reply => json(404, { error: 'err_not_found' });

function tokenInfo(ledger: SimulatedLedger, token: TokenDef, index: number) {
  return {
    tag: token.tag,
    id: token.id,
    symbol: token.symbol,
    decimals: token.decimals,
    chainType: token.chainType,
    chainID: token.chainID,
    totalSupply: (ledger.book.supply[index] ?? 0n).toString(),
    transferFee: token.transferFee,
    bundleFee: token.bundleFee,
    burnFees: token.burnFeeMap,
  };
}

function feeOf(token: TokenDef) {
  return {
    tokenTag: token.tag,
    transferFee: token.transferFee,
    bundleFee: token.bundleFee,
    burnFeeMap: token.burnFeeMap,
  };
}

function info(ledger: SimulatedLedger): Reply {
  const head = ledger.headRawId();
  return json(200, {
    ethChainID: 1,
    feeRecipient: ledger.wellKnown.feeRecipient,
    owner: ledger.wellKnown.owner,
    rootHash: `0x${createRng(head, 0x2007).hex(32)}`,
    ledgerRootHash: `0x${createRng(head, 0x1ed9e).hex(32)}`,
    isSynced: true,
    isClosed: false,
    lockers: ledger.wellKnown.lockers,
    tokenList: ledger.tokens.map((token, i) => tokenInfo(ledger, token, i)),
  });
}

function balanceOf(ledger: SimulatedLedger, account: string, index: number) {
  const token = ledger.tokens[index]!;
  const number = ledger.table.findAccount(account);
  const amount = number === undefined ? 0n : ledger.book.balance(number, index);
  return { tag: token.tag, amount: amount.toString(), decimals: token.decimals };
}

function parsePage(value: string | null): number | undefined {
  if (value === null || value === '') return 1;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1) return undefined;
  return Number(value);
}

function txList(ctx: PublicRouteContext, params: URLSearchParams, account: string | undefined): Reply {
  const page = parsePage(params.get('page'));
  if (page === undefined) return json(400, { error: 'err_invalid_page' });
  const action = params.get('action');
  const withoutAction = params.get('withoutAction');
  const tokenTag = params.get('tokenTag');
  const view = ctx.ledger.list({
    ...(account !== undefined ? { account } : {}),
    ...(tokenTag ? { tokenTag } : {}),
    ...(action ? { action: actionCode(action) } : {}),
    ...(withoutAction ? { withoutAction: actionCode(withoutAction) } : {}),
  });
  if (
    account === undefined &&
    ctx.keyPaging &&
    (params.has('cursor') || params.has('order') || params.has('count'))
  ) {
    const cursorText = params.get('cursor');
    const cursor = cursorText === null || cursorText === '' ? undefined : Number(cursorText);
    const order = params.get('order') ?? 'asc';
    const count = Number(params.get('count') ?? '10');
    if (cursor !== undefined && !Number.isSafeInteger(cursor))
      return json(400, { error: 'err_invalid_cursor' });
    if (order !== 'asc' && order !== 'desc') return json(400, { error: 'err_invalid_order' });
    if (!Number.isInteger(count) || count < 1 || count > 500)
      return json(400, { error: 'err_invalid_count' });
    const slice = ctx.ledger.keyPage(view, { cursor, order, count, faults: ctx.recordFaults() });
    return { status: 200, body: joinJson('{"txs":[', slice.texts, `],"hasNextPage":${slice.hasNextPage}}`) };
  }
  const slice = ctx.ledger.page(view, page, ctx.recordFaults());
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

const COMMA = Buffer.from(',');

/** `prefix` + the parts joined by commas + `suffix`, as one buffer. */
function joinJson(prefix: string, parts: Buffer[], suffix: string): Buffer {
  const pieces: Buffer[] = [Buffer.from(prefix)];
  parts.forEach((part, i) => {
    if (i > 0) pieces.push(COMMA);
    pieces.push(part);
  });
  pieces.push(Buffer.from(suffix));
  return Buffer.concat(pieces);
}

function oneTx(ctx: PublicRouteContext, pos: number | undefined): Reply {
  if (pos === undefined) return notFound();
  return { status: 200, body: joinJson('{"tx":', [ctx.ledger.servedBytes(pos, ctx.recordFaults())], '}') };
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Matches a public request to its route; undefined for an unknown path or method. */
export function matchPublicRoute(
  ctx: PublicRouteContext,
  method: string,
  path: string,
  params: URLSearchParams,
): PublicRoute | undefined {
  const parts = path.split('/').slice(1).map(decode);
  if (parts.some((p) => p === undefined || p === '')) return undefined;
  const [head, a, b] = parts as string[];
  const { ledger } = ctx;
  const get = (name: string, answer: () => Reply): PublicRoute | undefined =>
    method === 'GET' ? { name: `GET ${name}`, needsBody: false, answer } : undefined;
  const tokenIndex = (tag: string) => ledger.tokens.findIndex((t) => t.tag === tag);

  switch (parts.length) {
    case 1:
      if (head === 'info') return get('/info', () => info(ledger));
      if (head === 'fees') return get('/fees', () => json(200, { fees: ledger.tokens.map(feeOf) }));
      if (head === 'txs') return get('/txs', () => txList(ctx, params, undefined));
      if (head === 'tx' && method === 'POST')
        return { name: 'POST /tx', needsBody: true, answer: ctx.submit };
      return undefined;
    case 2:
      if (head === 'balances')
        return get('/balances/{account}', () =>
          json(200, { accid: a, balances: ledger.tokens.map((_, i) => balanceOf(ledger, a!, i)) }),
        );
      if (head === 'fee')
        return get('/fee/{tag}', () => {
          const token = ledger.tokens[tokenIndex(a!)];
          return token ? json(200, { fee: feeOf(token) }) : json(404, { error: 'err_token_not_found' });
        });
      if (head === 'txs') return get('/txs/{account}', () => txList(ctx, params, a));
      if (head === 'txsByAccount') return get('/txsByAccount/{account}', () => txList(ctx, params, a));
      if (head === 'txsByHash')
        return get('/txsByHash/{ledgerHash}', () => oneTx(ctx, ledger.byLedgerHash(a!)));
      if (head === 'mintedTxByChainTxHash')
        return get('/mintedTxByChainTxHash/{chainTxHash}', () => oneTx(ctx, ledger.byMintChainHash(a!)));
      return undefined;
    case 3:
      if (head === 'balance')
        return get('/balance/{tag}/{account}', () => {
          const index = tokenIndex(a!);
          if (index < 0) return json(404, { error: 'err_token_not_found' });
          return json(200, { accid: b, balance: balanceOf(ledger, b!, index) });
        });
      return undefined;
    default:
      return undefined;
  }
}
