/**
 * The change feed's events as served, and the filters a reader asks for: plain data and pure
 * functions (docs/design.md, "The change feed").
 */

/** The fields whose changes are events: what a record's `changed` event may carry. */
export const TRACKED_FIELDS = ['status', 'internalStatus', 'targetChainTxHash', 'express'] as const;
export type TrackedField = (typeof TRACKED_FIELDS)[number];

/** A record's `express` object as stored. */
export interface ExpressFields {
  chainTxHash: string;
  withdrawFee: string;
  refundLedgerHash: string;
  err: string;
}

/** The tracked fields' values when a record was first stored. */
export interface StoredFields {
  status: string;
  internalStatus: string;
  targetChainTxHash: string;
  express: ExpressFields;
}

/** The tracked fields that differ in a change, each as `[old, new]`. */
export type ChangedFields = {
  [K in TrackedField]?: [StoredFields[K], StoredFields[K]];
};

interface EventBase {
  /** Where the event stands in the feed: grows with commit order; resume with it (`after`, `Last-Event-ID`). */
  position: number;
  rawId: number;
  action: string;
  tokenTag: string;
  from: string;
  to: string;
  /** When its transaction was given its positions (shortly after it committed). */
  stampedAt: string;
  /** A bundle's: the accounts its items move tokens from or to (sorted, each once). */
  itemAccounts?: string[];
}

/** One event of the feed: a record first stored, or a change of its tracked fields. */
export type FeedEvent =
  | (EventBase & { kind: 'stored'; fields: StoredFields })
  | (EventBase & { kind: 'changed'; fields: ChangedFields });

/** What a reader wants of the feed; an absent filter lets every event through. */
export interface FeedFilter {
  /** A record sent from or to this account (EVM addresses in any case). */
  account?: string | undefined;
  tokenTag?: string | undefined;
  action?: string | undefined;
}

/** The first position, before any event: a reader that starts here replays the whole feed (if retained). */
export const FEED_START = 0;

/**
 * Whether `event` passes `filter`. The account is either side of the record, or of a bundle's
 * items; EVM addresses compare case-insensitively, other accounts exactly.
 */
export function matchesFilter(event: FeedEvent, filter: FeedFilter): boolean {
  if (filter.action !== undefined && event.action !== filter.action) return false;
  if (filter.tokenTag !== undefined && event.tokenTag.toLowerCase() !== filter.tokenTag.toLowerCase()) {
    return false;
  }
  if (filter.account !== undefined) {
    const wanted = accountKey(filter.account);
    const parties = [event.from, event.to, ...(event.itemAccounts ?? [])];
    if (!parties.some((party) => accountKey(party) === wanted)) return false;
  }
  return true;
}

/** An account as compared: EVM addresses lower-cased (their checksum case carries no meaning). */
function accountKey(account: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(account) ? account.toLowerCase() : account;
}

/** A row of the feed's read (`feed-sql.ts`), as the drivers return it. */
export interface FeedEventRow {
  position: string;
  kind: string;
  raw_id: string;
  action: string;
  token_tag: string;
  from_account: string;
  to_account: string;
  status: string;
  internal_status: string;
  target_chain_tx_hash: string;
  express_chain_tx_hash: string;
  express_withdraw_fee: string;
  express_refund_ledger_hash: string;
  express_err: string;
  /** `changed`: the values before of the fields that differ. */
  old: unknown;
  stamped_at: string;
  /** A bundle's item accounts as a JSON array (`null` for other actions, or a bundle without items). */
  item_accounts?: unknown;
}

/**
 * A row as an event: a `stored` one with its fields' values, a `changed` one with `[old, new]` of
 * each field that differs (the row holds the values after, and the values before of those).
 */
export function feedEventOf(row: FeedEventRow): FeedEvent {
  const base: EventBase = {
    position: Number(row.position),
    rawId: Number(row.raw_id),
    action: row.action,
    tokenTag: row.token_tag,
    from: row.from_account,
    to: row.to_account,
    stampedAt: new Date(row.stamped_at).toISOString(),
  };
  const itemAccounts = jsonValue(row.item_accounts);
  if (Array.isArray(itemAccounts)) base.itemAccounts = itemAccounts as string[];
  const now: StoredFields = {
    status: row.status,
    internalStatus: row.internal_status,
    targetChainTxHash: row.target_chain_tx_hash,
    express: {
      chainTxHash: row.express_chain_tx_hash,
      withdrawFee: row.express_withdraw_fee,
      refundLedgerHash: row.express_refund_ledger_hash,
      err: row.express_err,
    },
  };
  if (row.kind === 'stored') return { ...base, kind: 'stored', fields: now };
  const old = (jsonValue(row.old) ?? {}) as Partial<StoredFields>;
  const fields: ChangedFields = {};
  for (const field of TRACKED_FIELDS) {
    const before = old[field];
    // One field at a time: TypeScript cannot pair a key with its own value type in a loop.
    if (before !== undefined) (fields as Record<string, unknown>)[field] = [before, now[field]];
  }
  return { ...base, kind: 'changed', fields };
}

/** A JSON column as the drivers give it: parsed already, or as text. */
function jsonValue(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
