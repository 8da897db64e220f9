/**
 * Types of what the ledger service answers, after validation; the domain types the sync engine
 * shares live in `src/sync/model.ts` and are re-exported here. Amounts and other big numbers
 * stay decimal strings end to end; they never pass through a JavaScript `number`.
 */

/** The four actions the service documents. It has others (`set`, …): any string is kept. */
export const KNOWN_ACTIONS = ['mint', 'transfer', 'burn', 'bundle'] as const;
export type KnownAction = (typeof KNOWN_ACTIONS)[number];

export type {
  InternalStatus,
  LedgerExpress,
  LedgerToken,
  LedgerTx,
  RejectedRecord,
  TxListFilter,
  TxPage,
} from '../sync/model.js';

import type { LedgerToken, LedgerTx, RejectedRecord, TxListFilter } from '../sync/model.js';

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

/** One page of key paging (`/txs?cursor=<rawId>&order=asc&count=<n>`), where a deployment offers it. */
export interface TxKeyPage {
  /** Valid records, in the order served (ascending `rawId`). */
  txs: LedgerTx[];
  rejected: RejectedRecord[];
  hasNextPage: boolean;
}

/** The answer of `POST /tx`: `{"status":"ok"}` on success. */
export interface SubmitTxResult {
  status: string;
  /** The whole answer. */
  raw: Record<string, unknown>;
}
