import { isNotFound } from '../client/http.js';
import type { LedgerClient } from '../client/ledger-client.js';
import type {
  FetchByHash,
  FetchKeyHead,
  FetchKeyPage,
  FetchKeyText,
  FetchPage,
} from '../sync/ports/fetches.js';
import { keyHeadReader } from '../sync/raw-id-screen.js';

/**
 * The sync engine's `FetchPage` over a client: the global list, or one account's when the spec
 * names it. Aborting `signal` abandons every request in flight and its retries.
 */
export function createFetchPage(client: LedgerClient, signal?: AbortSignal): FetchPage {
  const call = { signal };
  return (spec, page) => {
    const query = { page, tokenTag: spec.tokenTag, action: spec.action, withoutAction: spec.withoutAction };
    return spec.account === undefined
      ? client.txs(query, call)
      : client.txsByAccount(spec.account, query, call);
  };
}

/**
 * The sync engine's `FetchKeyPage` over a client: a stream's records after a cursor, ascending
 * (or before it, newest first, when asked `desc`), in the key dialect (the list host's
 * `/txs?cursor=…&order=asc&count=…`, an account's by the client's account-list setting).
 */
export function createFetchKeyPage(client: LedgerClient, signal?: AbortSignal): FetchKeyPage {
  const call = { signal };
  return (spec, { cursor, count, order }) =>
    client.txsByKey(
      {
        cursor,
        order: order ?? 'asc',
        count,
        account: spec.account,
        tokenTag: spec.tokenTag,
        action: spec.action,
        withoutAction: spec.withoutAction,
      },
      call,
    );
}

/**
 * The sync engine's `FetchKeyText` over a client: {@link createFetchKeyPage}'s answers ascending,
 * kept as text, for every list but an account's (`undefined` for those).
 */
export function createFetchKeyText(client: LedgerClient, signal?: AbortSignal): FetchKeyText {
  const call = { signal };
  return (spec, { cursor, count }) =>
    spec.account === undefined
      ? client.txsTextByKey(
          {
            cursor,
            order: 'asc',
            count,
            tokenTag: spec.tokenTag,
            action: spec.action,
            withoutAction: spec.withoutAction,
          },
          call,
        )
      : undefined;
}

/**
 * The newest rawId of a stream by key (`order=desc&count=1`): the head a backfill in lanes splits
 * below. A newest record set aside still names its rawId; `null` when the list is empty or its
 * newest record has none.
 */
export function createFetchKeyHead(client: LedgerClient, signal?: AbortSignal): FetchKeyHead {
  const fetchKeyPage = createFetchKeyPage(client, signal);
  return (spec) => keyHeadReader(fetchKeyPage, spec)();
}

/** The sync engine's `FetchByHash` over a client: `null` when the service answers 404. */
export function createFetchByHash(client: LedgerClient, signal?: AbortSignal): FetchByHash {
  return async (ledgerHash) => {
    try {
      return await client.txsByHash(ledgerHash, { signal });
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  };
}
