import type { LedgerInfo, LedgerTx, TxListQuery, TxPage } from '../client/types.js';
import { HttpError } from '../errors.js';
import type { FetchByHash, FetchPage } from './ports.js';

/**
 * The part of the ledger client the sync engine uses, as a structural type: the real client
 * (`createLedgerClient`) satisfies it, and so does anything else that speaks the same calls.
 */
export interface SyncClient {
  txs(query?: TxListQuery): Promise<TxPage>;
  txsByAccount(account: string, query?: TxListQuery): Promise<TxPage>;
  txsByHash(ledgerHash: string): Promise<LedgerTx | null>;
  info(): Promise<LedgerInfo>;
}

/** {@link FetchPage} over the client: the global list without an account, the account's list with one. */
export function fetchPageFromClient(client: SyncClient): FetchPage {
  return (spec, page) => {
    const query: TxListQuery = {
      page,
      tokenTag: spec.tokenTag,
      action: spec.action,
      withoutAction: spec.withoutAction,
    };
    return spec.account === undefined ? client.txs(query) : client.txsByAccount(spec.account, query);
  };
}

/** {@link FetchByHash} over the client; a 404 means the service does not know the hash. */
export function fetchByHashFromClient(client: SyncClient): FetchByHash {
  return async (ledgerHash) => {
    try {
      return await client.txsByHash(ledgerHash);
    } catch (error) {
      if (error instanceof HttpError && error.status === 404) return null;
      throw error;
    }
  };
}
