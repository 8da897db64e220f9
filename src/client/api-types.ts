/**
 * Types of what the ledger service answers, after validation; the domain types the sync engine
 * shares live in `src/domain/model.ts`, imported from there. Amounts and other big numbers
 * stay decimal strings end to end; they never pass through a JavaScript `number`.
 */

import type { LedgerToken, LedgerTx, RejectedRecord, TxListFilter } from '../domain/model.js';

/** The four actions the service documents. It has others (`set`, …): any string is kept. */
export const KNOWN_ACTIONS = ['mint', 'transfer', 'burn', 'bundle'] as const;
export type KnownAction = (typeof KNOWN_ACTIONS)[number];

export interface TxListQuery extends TxListFilter {
  /** 1-based; default 1. */
  page?: number | undefined;
}

export interface LedgerInfo {
  tokenList: LedgerToken[];
  /** The whole answer, for the top-level fields (feeRecipient, lockers, …). */
  raw: Record<string, unknown>;
}

export interface LedgerBalance {
  tag: string;
  amount: string;
  decimals: number;
}

export interface LedgerBalances {
  accid: string;
  balances: LedgerBalance[];
}

export interface LedgerFee {
  tokenTag: string;
  transferFee: string;
  bundleFee: string;
  burnFeeMap: Record<string, string>;
}

/** `/balance/{tag}/{account}`: one token's balance of one account. */
export interface LedgerAccountBalance {
  accid: string;
  balance: LedgerBalance;
}

/**
 * A key-paging request (`/txs?cursor=<rawId>&order=asc|desc&count=<n>`): the records after
 * `cursor` in `order`, of the whole ledger or of one `account`.
 */
export interface TxKeyQuery extends TxListFilter {
  /** The last `rawId` already seen (exclusive); sent only when > 0. Default: from the start. */
  cursor?: number | undefined;
  /** `asc` follows the ledger up from `cursor`; `desc` reads down from it (or from the newest). */
  order: 'asc' | 'desc';
  /** Records wanted. Default: the client's accepted count (`keyCount()`). */
  count?: number | undefined;
  /** One account's records only. */
  account?: string | undefined;
}

/** A key-paging answer as the service sends it: `{txs, hasNextPage}`. */
export interface TxKeyAnswer {
  /** Valid records, in the order served. */
  txs: LedgerTx[];
  rejected: RejectedRecord[];
  /**
   * Whether more records follow. A page may hold fewer than asked while this is true (a silent
   * cap): go on from the last `rawId` received.
   */
  hasNextPage: boolean;
  /** The answer's JSON as received. */
  text: string;
}

/** One page of key paging, with the count that was asked for it. */
export interface TxKeyPage extends TxKeyAnswer {
  /** The `count` sent (after any halving the service asked for). */
  count: number;
}

/** The two list dialects: key paging (`cursor`, `hasNextPage`) and page numbers (`page`, `totalPages`). */
export type ListDialect = 'key' | 'page';

/** The answer of `POST /tx`: `{"status":"ok"}` on success. */
export interface SubmitTxResult {
  status: string;
  /** The whole answer. */
  raw: Record<string, unknown>;
}
