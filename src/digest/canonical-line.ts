/**
 * The canonical line of a record: its stored fields in a fixed order, so a record read from the
 * mirror's table and one held by the service (or the simulator) give the same text when they
 * hold the same values. Pure: no I/O.
 */

/**
 * What a record's digest covers. The domain model's `LedgerTx` fits it as it is; the mirror's
 * rows and the simulator's records are mapped to it. Absent values are empty strings.
 */
export interface DigestRecord {
  rawId: number;
  tokenSymbol: string;
  action: string;
  from: string;
  to: string;
  /** Decimal digits; leading zeros do not count. */
  amount: string;
  /** Decimal digits; leading zeros do not count. */
  fee: string;
  feeRecipient: string;
  /** Decimal digits; leading zeros do not count. */
  nonce: string;
  tokenID: string;
  chainType: string;
  chainID: string;
  data: string;
  version: string;
  sig: string;
  ledgerHash: string;
  status: string;
  /** The record id (wire `id`, the storage batch). */
  id: string;
  /** Milliseconds since the epoch; 0 until packaged. */
  timestamp: number;
  /** The raw string as served. */
  internalStatus: string;
  targetChainTxHash: string;
  express: { chainTxHash: string; withdrawFee: string; refundLedgerHash: string; err: string };
}

/** The fields of a canonical line, in its order (wire names; `express.*` for the express object). */
export const DIGEST_FIELDS = [
  'rawId',
  'tokenSymbol',
  'action',
  'from',
  'to',
  'amount',
  'fee',
  'feeRecipient',
  'nonce',
  'tokenID',
  'chainType',
  'chainID',
  'data',
  'version',
  'sig',
  'ledgerHash',
  'status',
  'id',
  'timestamp',
  'internalStatus',
  'targetChainTxHash',
  'express.chainTxHash',
  'express.withdrawFee',
  'express.refundLedgerHash',
  'express.err',
] as const;

export type DigestField = (typeof DIGEST_FIELDS)[number];

/**
 * The record's canonical line: a JSON array of its {@link DIGEST_FIELDS} values. JSON escapes
 * every line break and quote, so a line never spans two lines and no value can pass for two.
 * Numerics lose their leading zeros, as PostgreSQL's `numeric` does.
 */
export function canonicalLine(record: DigestRecord): string {
  const { express } = record;
  return JSON.stringify([
    record.rawId,
    record.tokenSymbol,
    record.action,
    record.from,
    record.to,
    canonicalDigits(record.amount),
    canonicalDigits(record.fee),
    record.feeRecipient,
    canonicalDigits(record.nonce),
    record.tokenID,
    record.chainType,
    record.chainID,
    record.data,
    record.version,
    record.sig,
    record.ledgerHash,
    record.status,
    record.id,
    record.timestamp,
    record.internalStatus,
    record.targetChainTxHash,
    express.chainTxHash,
    express.withdrawFee,
    express.refundLedgerHash,
    express.err,
  ]);
}

/** `007` → `7`: the text PostgreSQL gives back for a numeric stored from `007`. */
export function canonicalDigits(value: string): string {
  return value.replace(/^0+(?=\d)/, '');
}

/**
 * The fields whose values differ between two canonical lines of one record. A line that is not
 * a canonical line (another version's) differs as a whole: every field is named.
 */
export function differingFields(a: string, b: string): DigestField[] {
  const left = parseLine(a);
  const right = parseLine(b);
  if (left === undefined || right === undefined) return a === b ? [] : [...DIGEST_FIELDS];
  return DIGEST_FIELDS.filter((_, i) => left[i] !== right[i]);
}

function parseLine(line: string): unknown[] | undefined {
  try {
    const values: unknown = JSON.parse(line);
    return Array.isArray(values) && values.length === DIGEST_FIELDS.length ? values : undefined;
  } catch {
    return undefined;
  }
}
