/**
 * Wire record → table rows, as pure functions: no I/O, no clock (the caller passes `now`).
 */

import { checkIntegrity, type IntegrityOutcome } from '../../domain/integrity.js';
import type { LedgerTx } from '../../domain/model.js';
import { isScreened } from '../../domain/screened-text.js';
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
const DEFAULT_BURN_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The last millisecond a `Date` can hold (beyond it `new Date(ms)` is invalid). */
const MAX_TIME_MS = 8.64e15;
const DAY_MS = 24 * 60 * 60 * 1000;

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
  checkDigits(tx, 'amount');
  checkDigits(tx, 'fee');
  checkDigits(tx, 'nonce');
  if (!Number.isSafeInteger(tx.timestamp) || tx.timestamp < 0) {
    throw new InvalidRecordError(
      `timestamp is not a non-negative integer: ${String(tx.timestamp)}`,
      safeJson(tx),
    );
  }
  if (tx.timestamp > MAX_TIME_MS) {
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
    ledger_time: tx.timestamp === 0 ? null : isoTime(tx.timestamp),
    target_chain_tx_hash: tx.targetChainTxHash,
    express_chain_tx_hash: tx.express.chainTxHash,
    express_withdraw_fee: tx.express.withdrawFee,
    express_refund_ledger_hash: tx.express.refundLedgerHash,
    express_err: tx.express.err,
    token_tag: tokenTag,
    hash_check: integrity.hash,
    signature_check: options.checkSignatures === true ? integrity.signature : null,
  };
  // A record read from an answer that spells no NUL and no surrogate cannot hold one (see
  // screened-text.ts); the tag from the known tags did not come from it and is checked as before.
  const screened = isScreened(tx);
  if (screened && knownTags !== undefined && hasUnstorableText(tokenTag)) {
    throw new InvalidRecordError('token_tag holds a NUL or unpaired surrogate character', safeJson(tx));
  }
  if (!screened) {
    for (const key in row) {
      if (hasUnstorableText(row[key as keyof TransactionRow])) {
        throw new InvalidRecordError(`${key} holds a NUL or unpaired surrogate character`, safeJson(tx));
      }
    }
  }
  const items = tx.action === 'bundle' ? bundleItems(tx.rawId, tx.data, screened) : [];
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
  return isEvmId(id) ? id.toLowerCase() : id;
}

/** An EVM id: `0x` and 40 hex digits, any case (`/^0x[0-9a-fA-F]{40}$/` as a character check). */
function isEvmId(id: string): boolean {
  if (id.length !== 42 || id.charCodeAt(0) !== 48 || id.charCodeAt(1) !== 120) return false;
  for (let i = 2; i < 42; i++) {
    const code = id.charCodeAt(i);
    const lower = code | 0x20;
    if (!((code >= 48 && code <= 57) || (lower >= 97 && lower <= 102 && code >= 65))) return false;
  }
  return true;
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
  return bundleItems(rawId, data, false);
}

/** {@link parseBundleItems}; `screened` when `data` is known to hold no NUL and no unpaired surrogate. */
function bundleItems(rawId: number, data: string, screened: boolean): BundleItemRow[] {
  // No key can read `bundle` without those letters or a `\u` escape: most `data` (a mint's
  // deposit, a burn's target) is not parsed at all.
  if (!data.includes('bundle') && !data.includes('\\u')) return [];
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
  const list = bundle['items'] as unknown[];
  for (let index = 0; index < list.length; index++) {
    const item = list[index];
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
  return !screened && rows.some(hasUnstorableText) ? [] : rows;
}

const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));
/** The day {@link isoTime} last formatted, and its text up to the `T` included. */
let lastDay = Number.NaN;
let lastDayText = '';

/**
 * `new Date(ms).toISOString()` for `0 <= ms <= 8.64e15`, at a fraction of its cost: the date part
 * comes from `toISOString` once per day (records come in time order, so it rarely changes), the
 * time of day is formatted here.
 */
export function isoTime(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    const text = new Date(day * DAY_MS).toISOString();
    lastDayText = text.slice(0, text.indexOf('T') + 1);
    lastDay = day;
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${lastDayText}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[millis]}Z`;
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
  if (isObject(value)) {
    for (const key in value) {
      if (Object.hasOwn(value, key) && (UNSTORABLE.test(key) || hasUnstorableText(value[key]))) return true;
    }
  }
  return false;
}

/** Replaces what PostgreSQL text cannot hold (NUL, unpaired surrogates) with U+FFFD, for raw text kept for reports. */
export function toStorableText(value: string): string {
  return value.replace(new RegExp(UNSTORABLE.source, 'g'), '\uFFFD');
}

function checkDigits(tx: LedgerTx, field: 'amount' | 'fee' | 'nonce'): void {
  if (!isDigits(tx[field])) {
    throw new InvalidRecordError(
      `${field} is not a decimal digit string: ${JSON.stringify(tx[field])}`,
      safeJson(tx),
    );
  }
}

function isDigits(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_DIGITS && DIGITS.test(value);
}

/** `007` → `7`, so the text of the stored numeric equals the text sent. */
function normaliseDigits(value: string): string {
  return value.length > 1 && value.charCodeAt(0) === 48 ? value.replace(/^0+(?=\d)/, '') : value;
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
