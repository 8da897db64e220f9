import type { InternalStatus, LedgerExpress, LedgerTx, RejectedRecord } from '../domain/model.js';
import { InvalidRecordError } from '../errors.js';

/** Decimal digits only: no sign, no point, no exponent. */
const DIGITS = /^\d+$/;
/** An old record's `internalStatus`: a bare word such as `success`. */
const BARE_WORD = /^[A-Za-z_][\w-]*$/;
/** `nonce` is stored as a Postgres bigint; a longer digit string would fail the whole page's write. */
const BIGINT_MAX = 9_223_372_036_854_775_807n;
/** The last millisecond of the year 9999: a later `timestamp` has no `timestamptz` the database takes. */
const TIMESTAMP_MAX = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** PostgreSQL's `numeric` holds at most this many digits before the decimal point. */
const NUMERIC_DIGITS_MAX = 131_072;

const REQUIRED_STRINGS = [
  'id',
  'tokenSymbol',
  'action',
  'from',
  'to',
  'feeRecipient',
  'tokenID',
  'chainType',
  'chainID',
  'data',
  'sig',
  'status',
] as const;

const EXPRESS_FIELDS = ['chainTxHash', 'withdrawFee', 'refundLedgerHash', 'err'] as const;

/**
 * Validates one wire transaction record and returns it typed. Amounts stay decimal strings,
 * `nonce` becomes a digit string, `internalStatus` is parsed (JSON or an old record's bare word)
 * and the optional fields older records lack (`version`, `internalStatus`, `express`,
 * `targetChainTxHash`) are defaulted to empty. Any `action` and `status` text is valid.
 *
 * Throws {@link InvalidRecordError} (reason + raw JSON) when the record cannot be trusted.
 */
export function parseTxRecord(value: unknown): LedgerTx {
  const reason = recordProblem(value);
  if (typeof reason === 'string') throw new InvalidRecordError(reason, rawText(value));
  return reason;
}

/**
 * Like {@link parseTxRecord}, but returns a {@link RejectedRecord} (with whatever keys could be
 * read) instead of throwing, so a page keeps its good records.
 */
export function tryParseTxRecord(
  value: unknown,
): { ok: true; tx: LedgerTx } | { ok: false; rejected: RejectedRecord } {
  const result = recordProblem(value);
  if (typeof result !== 'string') return { ok: true, tx: result };
  const rejected: RejectedRecord = { reason: result, raw: rawText(value) };
  if (isObject(value)) {
    if (isNonNegativeSafeInteger(value['rawId'])) rejected.rawId = value['rawId'];
    if (typeof value['ledgerHash'] === 'string' && value['ledgerHash'] !== '') {
      rejected.ledgerHash = value['ledgerHash'];
    }
  }
  return { ok: false, rejected };
}

/** Parses an `internalStatus` string (a JSON document with a string `status`, or a bare word); a string result is the problem. */
function parseInternalStatus(raw: string): InternalStatus | null | string {
  const text = raw.trim();
  if (text === '') return null;
  if (BARE_WORD.test(text)) return { status: text, json: { status: text } };
  const plain = plainStatusDocument(text);
  if (plain !== undefined) return { status: plain, json: { status: plain } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'internalStatus is neither JSON nor a bare word';
  }
  if (typeof parsed === 'string' && BARE_WORD.test(parsed))
    return { status: parsed, json: { status: parsed } };
  if (!isObject(parsed)) return 'internalStatus JSON is not an object';
  if (typeof parsed['status'] !== 'string') return 'internalStatus JSON has no string status';
  return { status: parsed['status'], json: parsed };
}

const STATUS_OPEN = '{"status":"';
const STATUS_CLOSE = '"}';

/**
 * The status of the usual document, `{"status":"…"}` with nothing to unescape in the status (no
 * quote, backslash or control character), read without `JSON.parse`, which would give the same;
 * undefined for any other text.
 */
function plainStatusDocument(text: string): string | undefined {
  const end = text.length - STATUS_CLOSE.length;
  if (end < STATUS_OPEN.length || !text.startsWith(STATUS_OPEN) || !text.endsWith(STATUS_CLOSE)) {
    return undefined;
  }
  for (let i = STATUS_OPEN.length; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c) return undefined;
  }
  return text.slice(STATUS_OPEN.length, end);
}

/** Returns the validated record, or the reason it is invalid. */
function recordProblem(value: unknown): LedgerTx | string {
  if (!isObject(value)) return `record is ${describe(value)}, not an object`;

  const rawId = value['rawId'];
  if (rawId === undefined || rawId === null) return 'rawId is missing';
  if (!isNonNegativeSafeInteger(rawId))
    return `rawId must be a non-negative safe integer (got ${describe(rawId)})`;

  const ledgerHash = value['ledgerHash'];
  if (typeof ledgerHash !== 'string' || ledgerHash === '') {
    return `ledgerHash must be a non-empty string (got ${describe(ledgerHash)})`;
  }

  for (const key of REQUIRED_STRINGS) {
    const field = value[key];
    if (typeof field !== 'string') return `${key} must be a string (got ${describe(field)})`;
  }

  const amount = value['amount'];
  const amountProblem = digitStringProblem(amount, 'amount');
  if (amountProblem !== undefined) return amountProblem;
  const fee = value['fee'];
  const feeProblem = digitStringProblem(fee, 'fee');
  if (feeProblem !== undefined) return feeProblem;

  const nonceField = value['nonce'];
  const nonceProblem = nonceFieldProblem(nonceField);
  if (nonceProblem !== undefined) return nonceProblem;

  const timestamp = value['timestamp'];
  if (!isNonNegativeSafeInteger(timestamp)) {
    return `timestamp must be a non-negative safe integer (got ${describe(timestamp)})`;
  }
  if (timestamp > TIMESTAMP_MAX)
    return `timestamp ${timestamp} lies beyond the year 9999: no time the database can hold`;

  const version = value['version'];
  const versionProblem = optionalStringProblem(version, 'version');
  if (versionProblem !== undefined) return versionProblem;
  const targetChainTxHash = value['targetChainTxHash'];
  const targetProblem = optionalStringProblem(targetChainTxHash, 'targetChainTxHash');
  if (targetProblem !== undefined) return targetProblem;

  const internal = parseInternalField(value['internalStatus']);
  if (typeof internal === 'string') return internal;

  const express = parseExpress(value['express']);
  if (typeof express === 'string') return express;

  // Every field below was checked above: the casts only restate it.
  return {
    rawId,
    id: value['id'] as string,
    tokenSymbol: value['tokenSymbol'] as string,
    action: value['action'] as string,
    from: value['from'] as string,
    to: value['to'] as string,
    amount: amount as string,
    fee: fee as string,
    feeRecipient: value['feeRecipient'] as string,
    nonce: nonceText(nonceField as string | number),
    tokenID: value['tokenID'] as string,
    chainType: value['chainType'] as string,
    chainID: value['chainID'] as string,
    data: value['data'] as string,
    version: typeof version === 'string' ? version : '',
    sig: value['sig'] as string,
    ledgerHash,
    status: value['status'] as string,
    internalStatus: internal.raw,
    internalStatusParsed: internal.parsed,
    timestamp,
    targetChainTxHash: typeof targetChainTxHash === 'string' ? targetChainTxHash : '',
    express,
  };
}

/** Why `field` is not a decimal digit string, or undefined when it is one. */
function digitStringProblem(field: unknown, key: string): string | undefined {
  if (typeof field !== 'string') return `${key} must be a decimal digit string (got ${describe(field)})`;
  if (!DIGITS.test(field)) return `${key} must be decimal digits (got '${clip(field)}')`;
  if (field.length > NUMERIC_DIGITS_MAX)
    return `${key} has ${field.length} digits: more than the database's numeric holds (${NUMERIC_DIGITS_MAX})`;
  return undefined;
}

/** Why `field` is not a nonce (a non-negative safe integer, or a digit string within bigint), or undefined. */
function nonceFieldProblem(field: unknown): string | undefined {
  if (typeof field === 'number') {
    if (!isNonNegativeSafeInteger(field)) {
      return `nonce must be a non-negative safe integer (got ${describe(field)})`;
    }
    return undefined;
  }
  if (typeof field === 'string' && DIGITS.test(field)) {
    // Nineteen digits or more can pass the bigint range; fewer never do.
    if (field.length >= 19 && BigInt(field) > BIGINT_MAX)
      return `nonce is out of the 64-bit range (got '${clip(field)}')`;
    return undefined;
  }
  return `nonce must be a non-negative integer or digit string (got ${describe(field)})`;
}

/** A nonce {@link nonceFieldProblem} accepted, as a digit string without leading zeros. */
function nonceText(field: string | number): string {
  if (typeof field === 'number') return String(field);
  return field.length > 1 && field.charCodeAt(0) === 48 ? field.replace(/^0+(?=\d)/, '') : field;
}

/** Why an optional field is neither absent, null nor a string, or undefined when it is one of them. */
function optionalStringProblem(field: unknown, key: string): string | undefined {
  if (field === undefined || field === null || typeof field === 'string') return undefined;
  return `${key} must be a string (got ${describe(field)})`;
}

function parseInternalField(field: unknown): { raw: string; parsed: InternalStatus | null } | string {
  if (field === undefined || field === null) return { raw: '', parsed: null };
  // Tolerated: a deployment that sends the document itself rather than a string holding it.
  if (isObject(field)) {
    if (typeof field['status'] !== 'string') return 'internalStatus object has no string status';
    return { raw: JSON.stringify(field), parsed: { status: field['status'], json: field } };
  }
  if (typeof field !== 'string') return `internalStatus must be a string (got ${describe(field)})`;
  const parsed = parseInternalStatus(field);
  if (typeof parsed === 'string') return `${parsed} (got '${clip(field)}')`;
  return { raw: field, parsed };
}

function parseExpress(field: unknown): LedgerExpress | string {
  const express: LedgerExpress = { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' };
  if (field === undefined || field === null) return express;
  if (!isObject(field)) return `express must be an object (got ${describe(field)})`;
  for (const key of EXPRESS_FIELDS) {
    const value = field[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return `express.${key} must be a string (got ${describe(value)})`;
    express[key] = value;
  }
  return express;
}

/** A plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isNonNegativeSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A short description of a bad value for a reason text: its type, and the value when short. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `string '${clip(value)}'`;
  return `${typeof value} ${clip(String(value))}`;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

function rawText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
