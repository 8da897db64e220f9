import {
  type KeyLimits,
  type ListDialect,
  listDialect,
  type PagingMode,
} from '../service-query/key-query.js';
import type { TokenDef } from './catalog.js';
import type { RecordFaults } from './faults.js';
import { joinJson } from './json-bytes.js';
import type { SimulatedLedger } from './ledger.js';
import { keyListReply, pageListReply } from './list-replies.js';
import { createRng } from './random.js';
import { json, notFound, type Reply } from './reply.js';

export { json, notFound, type Reply };

/** A matched public route: its name (for stats) and how to answer it. */
export interface PublicRoute {
  name: string;
  /** `POST /tx` needs the body; the others answer at once. */
  needsBody: boolean;
  /** For a list request: the dialect it is answered in (counted in the stats). */
  dialect?: ListDialect;
  answer(body: unknown): Reply;
}

/** What the public routes need besides the ledger. */
export interface PublicRouteContext {
  ledger: SimulatedLedger;
  /** The list dialects served. */
  paging: PagingMode;
  /** Limits on a key request's `count`. */
  keyLimits: KeyLimits;
  /** The record faults in force (malformed and tampered shares). */
  recordFaults(): RecordFaults;
  submit(body: unknown): Reply;
}

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

/** A list route, answered in the dialect the paging mode picks for its parameters. */
function listRoute(
  ctx: PublicRouteContext,
  name: string,
  params: URLSearchParams,
  account: string | undefined,
): PublicRoute {
  const dialect = listDialect(ctx.paging, params);
  return {
    name: `GET ${name}`,
    needsBody: false,
    dialect,
    answer: () => {
      const req = { ledger: ctx.ledger, params, account, faults: ctx.recordFaults() };
      return dialect === 'key' ? keyListReply(req, ctx.keyLimits) : pageListReply(req);
    },
  };
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
      if (head === 'txs') return method === 'GET' ? listRoute(ctx, '/txs', params, undefined) : undefined;
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
      if (head === 'txs' || head === 'txsByAccount')
        return method === 'GET' ? listRoute(ctx, `/${head}/{account}`, params, a) : undefined;
      if (head === 'txsByHash')
        return get('/txsByHash/{ledgerHash}', () => oneTx(ctx, ledger.byLedgerHash(a!)));
      if (head === 'mintedTxByChainTxHash')
        return get('/mintedTxByChainTxHash/{chainTxHash}', () => oneTx(ctx, ledger.byMintChainHash(a!)));
      // The deployed spellings of the two look-ups.
      if (head === 'tx') return get('/tx/{ledgerHash}', () => oneTx(ctx, ledger.byLedgerHash(a!)));
      if (head === 'minted')
        return get('/minted/{chainTxHash}', () => oneTx(ctx, ledger.byMintChainHash(a!)));
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
