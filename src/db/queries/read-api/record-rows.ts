/**
 * A stored record back into the service's wire record: the inverse of `src/db/write/encode.ts`,
 * as the JSON text the service sends (its fields in its order). Numbers travel as text from the
 * database to the answer: `amount` and `fee` stay decimal strings, `rawId`, `nonce` and
 * `timestamp` are written as JSON numbers from their digits, never through a JavaScript `number`.
 */
import { sql } from 'drizzle-orm';
import type { RecordColumn } from '../../schema/transaction-columns.js';

/**
 * Columns the write derives from the record (its parsed status, its time, its tag, the checks):
 * not part of what the service sent, so not rendered back.
 */
type DerivedColumn =
  | 'internal_status_code'
  | 'internal_status_json'
  | 'ledger_time'
  | 'token_tag'
  | 'hash_check'
  | 'signature_check';

/**
 * A `ledger_transactions` row as the read API selects it, every value as text: the record's
 * columns of the table, so a column added there and not rendered here fails to compile where a
 * row is built.
 */
export type RecordRow = Record<Exclude<RecordColumn, DerivedColumn>, string>;

/** The select list of {@link RecordRow}, for `FROM ledger_transactions t`. */
export const RECORD_SELECT = sql.raw(`t.raw_id::text AS raw_id, t.record_id, t.token_symbol, t.action,
  t.from_account, t.to_account, t.amount::text AS amount, t.fee::text AS fee, t.fee_recipient,
  t.nonce::text AS nonce, t.token_id, t.chain_type, t.chain_id, t.data, t.version, t.sig, t.ledger_hash,
  t.status, t.internal_status, t.timestamp_ms::text AS timestamp_ms, t.target_chain_tx_hash,
  t.express_chain_tx_hash, t.express_withdraw_fee, t.express_refund_ledger_hash, t.express_err`);

const text = JSON.stringify;

/** A whole number's digits as a JSON number (the columns are integers; a guard against anything else). */
function digits(value: string): string {
  if (!/^\d+$/.test(value)) throw new TypeError(`not a whole number: ${value}`);
  return value;
}

/**
 * The record's JSON text as the service serves it. The mirror stores an absent `version`,
 * `targetChainTxHash` or `express` of an older record as empty text, so it serves them empty:
 * it cannot tell absent from empty.
 */
export function recordJson(row: RecordRow): string {
  const express = `{"chainTxHash":${text(row.express_chain_tx_hash)},"withdrawFee":${text(row.express_withdraw_fee)},"refundLedgerHash":${text(row.express_refund_ledger_hash)},"err":${text(row.express_err)}}`;
  return [
    `{"rawId":${digits(row.raw_id)}`,
    `"id":${text(row.record_id)}`,
    `"tokenSymbol":${text(row.token_symbol)}`,
    `"action":${text(row.action)}`,
    `"from":${text(row.from_account)}`,
    `"to":${text(row.to_account)}`,
    `"amount":${text(row.amount)}`,
    `"fee":${text(row.fee)}`,
    `"feeRecipient":${text(row.fee_recipient)}`,
    `"nonce":${digits(row.nonce)}`,
    `"tokenID":${text(row.token_id)}`,
    `"chainType":${text(row.chain_type)}`,
    `"chainID":${text(row.chain_id)}`,
    `"data":${text(row.data)}`,
    `"version":${text(row.version)}`,
    `"sig":${text(row.sig)}`,
    `"ledgerHash":${text(row.ledger_hash)}`,
    `"status":${text(row.status)}`,
    `"internalStatus":${text(row.internal_status)}`,
    `"timestamp":${digits(row.timestamp_ms)}`,
    `"targetChainTxHash":${text(row.target_chain_tx_hash)}`,
    `"express":${express}}`,
  ].join(',');
}
