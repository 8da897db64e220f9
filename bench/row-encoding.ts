/**
 * Wire record → `ledger_transactions` columns, written the way a user would by hand: for the
 * baseline's INSERTs and the COPY ceiling. Not the indexer's encoder (that one is measured).
 */

/** The columns of `ledger_transactions` (as in `src/db/schema/tables.ts`), in COPY/INSERT order. */
export const TX_COLUMNS = [
  'raw_id',
  'record_id',
  'token_symbol',
  'action',
  'from_account',
  'to_account',
  'amount',
  'fee',
  'fee_recipient',
  'nonce',
  'token_id',
  'chain_type',
  'chain_id',
  'data',
  'version',
  'sig',
  'ledger_hash',
  'status',
  'internal_status',
  'internal_status_code',
  'internal_status_json',
  'timestamp_ms',
  'ledger_time',
  'target_chain_tx_hash',
  'express_chain_tx_hash',
  'express_withdraw_fee',
  'express_refund_ledger_hash',
  'express_err',
  'token_tag',
  'first_seen_at',
  'updated_at',
] as const;

/** A record as the service sends it (and as the simulator's ground truth holds it). */
export interface WireRecord {
  rawId: number;
  id: string;
  tokenSymbol: string;
  action: string;
  from: string;
  to: string;
  amount: string;
  fee: string;
  feeRecipient: string;
  nonce: number | string;
  tokenID: string;
  chainType: string;
  chainID: string;
  data: string;
  version?: string;
  sig: string;
  ledgerHash: string;
  status: string;
  internalStatus?: string;
  timestamp: number;
  targetChainTxHash?: string;
  express?: { chainTxHash?: string; withdrawFee?: string; refundLedgerHash?: string; err?: string };
  tokenTag?: string;
}

/** The column values of one record (strings or null), in {@link TX_COLUMNS} order. */
export function encodeRow(record: WireRecord, nowIso: string): Array<string | null> {
  const internal = record.internalStatus ?? '';
  const parsed = parseInternal(internal);
  const express = record.express ?? {};
  return [
    String(record.rawId),
    record.id,
    record.tokenSymbol,
    record.action,
    record.from,
    record.to,
    record.amount,
    record.fee,
    record.feeRecipient,
    String(record.nonce),
    record.tokenID,
    record.chainType,
    record.chainID,
    record.data,
    record.version ?? '',
    record.sig,
    record.ledgerHash,
    record.status,
    internal,
    parsed?.status ?? null,
    parsed ? JSON.stringify(parsed) : null,
    String(record.timestamp),
    record.timestamp > 0 ? new Date(record.timestamp).toISOString() : null,
    record.targetChainTxHash ?? '',
    express.chainTxHash ?? '',
    express.withdrawFee ?? '',
    express.refundLedgerHash ?? '',
    express.err ?? '',
    record.tokenTag ??
      `${record.chainType.toLowerCase()}-${record.tokenSymbol.toLowerCase()}-${record.tokenID}`,
    nowIso,
    nowIso,
  ];
}

function parseInternal(text: string): { status: string } | null {
  if (text === '') return null;
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && typeof (value as { status?: unknown }).status === 'string') {
      return value as { status: string };
    }
  } catch {
    // An old record's bare word.
  }
  return { status: text };
}

/** One line of PostgreSQL's COPY text format. */
export function copyLine(values: Array<string | null>): string {
  return `${values.map((v) => (v === null ? '\\N' : escapeCopy(v))).join('\t')}\n`;
}

function escapeCopy(value: string): string {
  return /[\\\t\n\r]/.test(value)
    ? value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : value;
}
