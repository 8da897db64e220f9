/**
 * The domain model of the sync engine: a validated transaction record, a page of a list, a
 * record kept aside, the list filters and a token. The client produces these from the wire;
 * the engine, the database layer and the queue use them. Amounts and other big numbers stay
 * decimal strings end to end; they never pass through a JavaScript `number`.
 */

/** The `express` (fast withdrawal) details of a record; all empty strings normally. */
export interface LedgerExpress {
  chainTxHash: string;
  withdrawFee: string;
  refundLedgerHash: string;
  err: string;
}

/** `internalStatus` parsed: a JSON document with a `status` key, or an old record's bare word. */
export interface InternalStatus {
  /** The inner status, e.g. `success` or `failed`. */
  status: string;
  /** The whole parsed document (a bare word becomes `{ status: word }`). */
  json: Record<string, unknown>;
}

/** A validated transaction record. Field names follow the wire format. */
export interface LedgerTx {
  /** Global increasing sequence number; a safe integer. */
  rawId: number;
  /** Storage batch id; `""` until packaged, shared by many records. */
  id: string;
  tokenSymbol: string;
  action: string;
  from: string;
  to: string;
  /** Decimal digits in the token's smallest unit. */
  amount: string;
  /** Decimal digits in the token's smallest unit. */
  fee: string;
  feeRecipient: string;
  /** Decimal digits (a millisecond-like client number). */
  nonce: string;
  tokenID: string;
  chainType: string;
  chainID: string;
  data: string;
  version: string;
  sig: string;
  ledgerHash: string;
  status: string;
  /** The raw string as the service sent it (`""` when absent). */
  internalStatus: string;
  internalStatusParsed: InternalStatus | null;
  /** Milliseconds since the epoch; 0 until packaged. */
  timestamp: number;
  targetChainTxHash: string;
  express: LedgerExpress;
}

/** A record of a page that failed validation: kept aside with the reason, never dropped silently. */
export interface RejectedRecord {
  reason: string;
  /** The record's raw JSON text. */
  raw: string;
  /** Whatever could be read of its keys, for reports. */
  rawId?: number | undefined;
  ledgerHash?: string | undefined;
  /** Its place in the list page's `txs` array (0 first), when it came from a list page. */
  index?: number | undefined;
}

/** One page of `/txs` or `/txsByAccount/{account}`. */
export interface TxPage {
  accid?: string | undefined;
  currentPage: number;
  totalPages: number;
  /** Valid records, in the order served (newest first). */
  txs: LedgerTx[];
  rejected: RejectedRecord[];
}

/** One answer of the key dialect (`/txs?cursor=…&order=asc&count=…`): records after the cursor. */
export interface TxKeyPage {
  /** Valid records, in the order served (ascending `rawId` when asked `asc`). */
  txs: LedgerTx[];
  rejected: RejectedRecord[];
  /** More records follow the last one served. */
  hasNextPage: boolean;
  /** The answer's JSON as received, when the fetch keeps it (it can cross threads cheaply). */
  text?: string | undefined;
}

/** What a key answer's text says of a walk's next step, read without parsing it (`guessKeyAnswer`). */
export interface KeyAnswerGuess {
  /** The rawId of the answer's last record; `null`: the answer lists none. */
  last: number | null;
  hasNextPage: boolean;
}

/**
 * A key answer kept as text, for a reader that parses it on another thread, with a guess of what
 * it says of the walk's next step; the parse decides.
 */
export interface KeyAnswerText {
  text: string;
  /** `null`: the text is not in the shape a guess reads; the walk waits for its parse. */
  guess: KeyAnswerGuess | null;
  /** The answer parsed here, as a fetch that parses would have answered it; throws as that fetch would. */
  parse(): TxKeyPage;
  /** The `count` sent (after any halving the service asked for). */
  count: number;
}

/** List filters shared by `/txs` and `/txsByAccount/{account}`. */
export interface TxListFilter {
  tokenTag?: string | undefined;
  action?: string | undefined;
  withoutAction?: string | undefined;
}

/** A token of `/info`'s `tokenList`. Fields beyond these are kept in `raw`. */
export interface LedgerToken {
  tag: string;
  symbol: string;
  decimals: number;
  chainType: string;
  chainID: string;
  id: string;
  raw: Record<string, unknown>;
}
