/**
 * Wire record → table rows, as pure functions: no I/O, no clock (the caller passes `now`).
 */

import { checkIntegrity, type IntegrityOutcome } from '../../domain/integrity.js';
import type { LedgerTx } from '../../domain/model.js';
import { InvalidRecordError } from '../../errors.js';
import type { BundleItemColumn, RecordColumn, SameKeys } from '../schema/transaction-columns.js';

/** A `ledger_transactions` row as sent to the database (snake_case keys, exact values as text). */
export interface TransactionRow {
  raw_id: number;
  record_id: string;
  token_symbol: string;
  action: string;
  from_account: string;
  to_account: string;
  amount: string;
  fee: string;
  fee_recipient: string;
  nonce: string;
  token_id: string;
  chain_type: string;
  chain_id: string;
  data: string;
  version: string;
  sig: string;
  ledger_hash: string;
  status: string;
  internal_status: string;
  internal_status_code: string | null;
  internal_status_json: Record<string, unknown> | null;
  timestamp_ms: number;
  /** ISO time, or null while the service's `timestamp` is 0. */
  ledger_time: string | null;
  target_chain_tx_hash: string;
  express_chain_tx_hash: string;
  express_withdraw_fee: string;
  express_refund_ledger_hash: string;
  express_err: string;
  token_tag: string;
  hash_check: IntegrityOutcome;
  /** Null when signatures were not checked. */
  signature_check: IntegrityOutcome | null;
}

// A column of `ledger_transactions` missing here (or one here the table lacks) fails to compile.
true satisfies SameKeys<keyof TransactionRow, RecordColumn>;

/** A `ledger_bundle_items` row. */
export interface BundleItemRow {
  raw_id: number;
  item_index: number;
  tag: string;
  chain_id: string;
  from_account: string;
  to_account: string;
  amount: string;
}

true satisfies SameKeys<keyof BundleItemRow, BundleItemColumn>;

/**
 * Why a record still needs re-reading: `status` (not `packaged` yet) or `burn` (a recent
 * withdrawal whose target-chain hash has not appeared yet). `null` when the record is final.
 */
export type PendingReason = 'status' | 'burn' | null;

/** A record ready to write. */
export interface EncodedTransaction {
  row: TransactionRow;
  /** The bundle's items; empty for other actions and for bundles whose `data` is unreadable. */
  items: BundleItemRow[];
  pending: PendingReason;
}

/** Options of {@link encodeTransaction}. */
export interface EncodeOptions {
  /** Tags of `/info` (authoritative); the derived tag is replaced by the one matching it. Default none. */
  knownTags?: readonly string[] | TokenTagMatcher;
  /** The clock, for deciding whether a burn is still recent enough to wait for. Default: the epoch (every burn is old). */
  now?: Date;
  /** How long after its ledger time a burn is waited on for its target-chain hash. Default 24 h. */
  burnWindowMs?: number;
  /** Recover each EVM sender's signature (about 2 ms of CPU a record; the hash is always checked). Default false. */
  checkSignatures?: boolean;
}

const DIGITS = /^\d+$/;
const MAX_DIGITS = 1000;
const EVM_ID = /^0x[0-9a-fA-F]{40}$/;
const DEFAULT_BURN_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Encodes a validated wire record into its rows. Throws {@link InvalidRecordError} when a value
 * cannot be stored exactly (an amount that is not a digit string, an unkeyable record).
 */
export function encodeTransaction(tx: LedgerTx, options: EncodeOptions = {}): EncodedTransaction {
  if (!Number.isSafeInteger(tx.rawId) || tx.rawId < 0) {
    throw new InvalidRecordError(
      `rawId is not a non-negative safe integer: ${String(tx.rawId)}`,
      safeJson(tx),
    );
  }
  if (typeof tx.ledgerHash !== 'string' || tx.ledgerHash === '') {
    throw new InvalidRecordError('ledgerHash is missing', safeJson(tx));
  }
  for (const field of ['amount', 'fee', 'nonce'] as const) {
    if (!isDigits(tx[field])) {
      throw new InvalidRecordError(
        `${field} is not a decimal digit string: ${JSON.stringify(tx[field])}`,
        safeJson(tx),
      );
    }
  }
  if (!Number.isSafeInteger(tx.timestamp) || tx.timestamp < 0) {
    throw new InvalidRecordError(
      `timestamp is not a non-negative integer: ${String(tx.timestamp)}`,
      safeJson(tx),
    );
  }
  const ledgerTime = tx.timestamp === 0 ? null : new Date(tx.timestamp);
  if (ledgerTime !== null && Number.isNaN(ledgerTime.getTime())) {
    throw new InvalidRecordError(`timestamp is out of range: ${tx.timestamp}`, safeJson(tx));
  }

  const derivedTag = deriveTokenTag(tx);
  const knownTags = options.knownTags;
  const tokenTag =
    knownTags === undefined
      ? derivedTag
      : typeof knownTags === 'function'
        ? knownTags(derivedTag)
        : createTokenTagMatcher(knownTags)(derivedTag);
  const parsed = tx.internalStatusParsed;
  // Checked on the values as served (before amounts lose leading zeros): they are what was signed.
  const integrity = checkIntegrity(tx, { signatures: options.checkSignatures === true });
  const row: TransactionRow = {
    raw_id: tx.rawId,
    record_id: tx.id,
    token_symbol: tx.tokenSymbol,
    action: tx.action,
    from_account: tx.from,
    to_account: tx.to,
    amount: normaliseDigits(tx.amount),
    fee: normaliseDigits(tx.fee),
    fee_recipient: tx.feeRecipient,
    nonce: normaliseDigits(tx.nonce),
    token_id: tx.tokenID,
    chain_type: tx.chainType,
    chain_id: tx.chainID,
    data: tx.data,
    version: tx.version,
    sig: tx.sig,
    ledger_hash: tx.ledgerHash,
    status: tx.status,
    internal_status: tx.internalStatus,
    internal_status_code: parsed ? parsed.status : null,
    internal_status_json: parsed ? parsed.json : null,
    timestamp_ms: tx.timestamp,
    ledger_time: ledgerTime === null ? null : ledgerTime.toISOString(),
    target_chain_tx_hash: tx.targetChainTxHash,
    express_chain_tx_hash: tx.express.chainTxHash,
    express_withdraw_fee: tx.express.withdrawFee,
    express_refund_ledger_hash: tx.express.refundLedgerHash,
    express_err: tx.express.err,
    token_tag: tokenTag,
    hash_check: integrity.hash,
    signature_check: options.checkSignatures === true ? integrity.signature : null,
  };
  for (const key in row) {
    if (hasUnstorableText(row[key as keyof TransactionRow])) {
      throw new InvalidRecordError(`${key} holds a NUL or unpaired surrogate character`, safeJson(tx));
    }
  }
  const items = tx.action === 'bundle' ? parseBundleItems(tx.rawId, tx.data) : [];
  return {
    row,
    items,
    pending: pendingReason(tx, options.now ?? new Date(0), options.burnWindowMs ?? DEFAULT_BURN_WINDOW_MS),
  };
}

/**
 * The token tag a record implies: `lower(chainType) + "-" + lower(symbol) + "-" + id`, where
 * EVM ids (`0x` + 40 hex digits) are lower-cased and other ids keep their case (Arweave ids are
 * case-sensitive). Multi-part fields stay comma-joined, part by part.
 */
export function deriveTokenTag(tx: Pick<LedgerTx, 'chainType' | 'tokenSymbol' | 'tokenID'>): string {
  const chains = tx.chainType.includes(',')
    ? tx.chainType.split(',').map(lowerPart).join(',')
    : lowerPart(tx.chainType);
  const ids = tx.tokenID.includes(',') ? tx.tokenID.split(',').map(idPart).join(',') : idPart(tx.tokenID);
  return `${chains}-${tx.tokenSymbol.trim().toLowerCase()}-${ids}`;
}

function lowerPart(part: string): string {
  return part.trim().toLowerCase();
}

function idPart(part: string): string {
  const id = part.trim();
  return EVM_ID.test(id) ? id.toLowerCase() : id;
}

/** Maps a derived tag to the authoritative `/info` tag it names, or returns it unchanged. */
export type TokenTagMatcher = (derived: string) => string;

/**
 * Builds a {@link TokenTagMatcher} over the `/info` tags: an exact match wins, else a
 * case-insensitive one (the sender's case of symbol and id varies). The database applies the
 * same rule when it writes rows (see `record-write-sql.ts`).
 */
export function createTokenTagMatcher(knownTags: readonly string[]): TokenTagMatcher {
  const exact = new Set(knownTags);
  const folded = new Map<string, string>();
  for (const tag of knownTags) {
    const key = tag.toLowerCase();
    if (!folded.has(key)) folded.set(key, tag);
  }
  return (derived) => (exact.has(derived) ? derived : (folded.get(derived.toLowerCase()) ?? derived));
}

/**
 * The items of a bundle's `data` (`{"bundle": {"items": [...]}}`). Unreadable data, or an item
 * without a digit-string amount, yields no items at all: the record is kept, its items are not
 * guessed. Items are listed whatever the bundle's outcome; they took effect only when its
 * `internalStatus` is `success`.
 */
export function parseBundleItems(rawId: number, data: string): BundleItemRow[] {
  if (data === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return [];
  }
  let bundle = isObject(parsed) ? parsed['bundle'] : undefined;
  if (typeof bundle === 'string') {
    try {
      bundle = JSON.parse(bundle);
    } catch {
      return [];
    }
  }
  if (!isObject(bundle) || !Array.isArray(bundle['items'])) return [];
  const rows: BundleItemRow[] = [];
  for (const [index, item] of (bundle['items'] as unknown[]).entries()) {
    if (!isObject(item)) return [];
    const amount = item['amount'];
    if (!isDigits(amount)) return [];
    rows.push({
      raw_id: rawId,
      item_index: index,
      tag: text(item['tag']),
      chain_id: text(item['chainID'] ?? item['chainId']),
      from_account: text(item['from']),
      to_account: text(item['to']),
      amount: normaliseDigits(amount),
    });
  }
  return rows.some(hasUnstorableText) ? [] : rows;
}

/** Whether a record is final, and if not why (see {@link PendingReason}). */
export function pendingReason(
  tx: Pick<LedgerTx, 'status' | 'action' | 'targetChainTxHash' | 'timestamp'>,
  now: Date,
  burnWindowMs: number,
): PendingReason {
  if (tx.status !== 'packaged') return 'status';
  if (tx.action === 'burn' && tx.targetChainTxHash === '') {
    const recent = tx.timestamp === 0 || tx.timestamp > now.getTime() - burnWindowMs;
    return recent ? 'burn' : null;
  }
  return null;
}

// Cheap first pass (no lookbehind); the exact pattern runs only on strings with NUL or a surrogate.
const MAYBE_UNSTORABLE = /[\u0000\uD800-\uDFFF]/;
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** PostgreSQL text and jsonb cannot hold NUL or unpaired surrogates; such a value would fail its whole batch. */
export function hasUnstorableText(value: unknown): boolean {
  if (typeof value === 'string') return MAYBE_UNSTORABLE.test(value) && UNSTORABLE.test(value);
  if (Array.isArray(value)) return value.some(hasUnstorableText);
  if (isObject(value))
    return Object.entries(value).some(([k, v]) => UNSTORABLE.test(k) || hasUnstorableText(v));
  return false;
}

/** Replaces what PostgreSQL text cannot hold (NUL, unpaired surrogates) with U+FFFD, for raw text kept for reports. */
export function toStorableText(value: string): string {
  return value.replace(new RegExp(UNSTORABLE.source, 'g'), '\uFFFD');
}

function isDigits(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_DIGITS && DIGITS.test(value);
}

/** `007` → `7`, so the text of the stored numeric equals the text sent. */
function normaliseDigits(value: string): string {
  return value.replace(/^0+(?=\d)/, '');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return '';
}

function safeJson(tx: LedgerTx): string {
  try {
    return JSON.stringify(tx);
  } catch {
    return String(tx);
  }
}
