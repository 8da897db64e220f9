/**
 * The fetching ports: how the sync engine reads the service's lists, by page number or by key,
 * and single records by hash. Implemented over the client (`src/app/sync-adapters.ts`); tests
 * implement them with arrays.
 */
import type { KeyAnswerText, LedgerTx, TxKeyPage, TxPage } from '../../domain/model.js';
import type { StreamSpec } from '../../domain/stream-key.js';

/** Fetches one page of a stream. Implemented over the client. */
export type FetchPage = (spec: StreamSpec, page: number) => Promise<TxPage>;

/**
 * Fetches the records of a stream after `cursor` (exclusive), ascending, by key: the deployed
 * dialect. `count` is a wish; a server may answer fewer with `hasNextPage` still true. With
 * `order: 'desc'` (default `asc`), the records before `cursor`, newest first; cursor 0: the
 * newest records of the stream.
 */
export type FetchKeyPage = (
  spec: StreamSpec,
  query: { cursor: number; count?: number | undefined; order?: 'asc' | 'desc' | undefined },
) => Promise<TxKeyPage>;

/**
 * {@link FetchKeyPage} ascending, the answer kept as text for a store that parses it on another
 * thread (`BackfillStore.readAhead`). `undefined` for a stream it cannot read so (an account's).
 */
export type FetchKeyText = (
  spec: StreamSpec,
  query: { cursor: number; count?: number | undefined },
) => Promise<KeyAnswerText> | undefined;

/** Fetches one record by its ledger hash; `null` when the service does not know it. */
export type FetchByHash = (ledgerHash: string) => Promise<LedgerTx | null>;

/** Reads the newest rawId of a stream (`order=desc&count=1`); `null` when the list is empty. */
export type FetchKeyHead = (spec: StreamSpec) => Promise<number | null>;
