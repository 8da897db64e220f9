/**
 * The read API's reference answers from the stored `/info` tokens (`ledger_tokens`): `/info`
 * (its `tokenList` only: the service's other top-level fields are not stored), `/fees` and
 * `/fee/{tag}` (from each token's fees as `/info` listed them), and the balances computed from
 * the stored movements.
 */
import { selectAccountBalances } from '../../db/queries/read-api/account-balances.js';
import { type StoredToken, selectStoredTokens } from '../../db/queries/read-api/reference-data.js';
import type { Executor } from '../../db/rows.js';
import type { Reply } from '../../http/server.js';
import { apiError, apiJson, NO_FEES, NO_REFERENCE, NOT_BACKFILLED } from './read-reply.js';
import { coverageOf } from './record-answers.js';

/** `/info`: `{tokenList}` as last stored. */
export async function infoAnswer(db: Executor): Promise<Reply> {
  const tokens = await selectStoredTokens(db);
  if (tokens.length === 0) return apiError(503, NO_REFERENCE);
  return apiJson(200, { tokenList: tokens.map((t) => t.raw) });
}

/** A token's fees as the service's `/fees` lists them, or null when its `/info` entry holds none. */
function feeOf(token: StoredToken): Record<string, unknown> | null {
  const { transferFee, bundleFee, burnFees } = token.raw;
  if (typeof transferFee !== 'string' || typeof bundleFee !== 'string') return null;
  if (typeof burnFees !== 'object' || burnFees === null || Array.isArray(burnFees)) return null;
  return { tokenTag: token.tag, transferFee, bundleFee, burnFeeMap: burnFees };
}

/** `/fees` (tag undefined) or `/fee/{tag}`. */
export async function feesAnswer(db: Executor, tag: string | undefined): Promise<Reply> {
  const tokens = await selectStoredTokens(db);
  if (tokens.length === 0) return apiError(503, NO_REFERENCE);
  const fees = tokens.map(feeOf);
  if (fees.some((fee) => fee === null)) return apiError(503, NO_FEES);
  if (tag === undefined) return apiJson(200, { fees });
  const fee = fees[tokens.findIndex((t) => t.tag === tag)];
  return fee ? apiJson(200, { fee }) : apiError(404, 'err_token_not_found');
}

/** `/balances/{account}` (tag undefined) or `/balance/{tag}/{account}`; needs the global list backfilled. */
export async function balancesAnswer(
  db: Executor,
  input: { account: string; tag: string | undefined; now: Date },
): Promise<Reply> {
  const tokens = await selectStoredTokens(db);
  if (tokens.length === 0) return apiError(503, NO_REFERENCE);
  const token = input.tag === undefined ? undefined : tokens.find((t) => t.tag === input.tag);
  if (input.tag !== undefined && token === undefined) return apiError(404, 'err_token_not_found');
  const coverage = await coverageOf(db, { globalOnly: true }, input.now);
  if (coverage === null) return apiError(503, NOT_BACKFILLED);
  const { headers } = coverage;
  const sums = await selectAccountBalances(db, input.account, coverage.upTo);
  const balanceOf = (t: StoredToken) => ({
    tag: t.tag,
    amount: sums.get(t.tag) ?? '0',
    decimals: t.decimals,
  });
  if (token !== undefined) return apiJson(200, { accid: input.account, balance: balanceOf(token) }, headers);
  return apiJson(200, { accid: input.account, balances: tokens.map(balanceOf) }, headers);
}
