/**
 * The set-based write of a batch of records: encoding and de-duplication, then one statement
 * (see `upsert-sql.ts`) that upserts the rows, appends status history, rewrites bundle items and
 * (for pages) queues or clears re-reads.
 */
import type { LedgerTx, RejectedRecord } from '../client/types.js';
import { InvalidRecordError } from '../errors.js';
import { type EncodedTransaction, encodeTransaction } from './encode.js';
import { type Executor, queryRows, queryRowsPrepared } from './rows.js';
import { buildUpsertQuery, type UpsertInput } from './upsert-sql.js';

export { DEFAULT_RECHECK_POLICY, type RecheckPolicy, rescheduleRechecks } from './rechecks.js';
export { buildUpsertQuery, textArray, type UpsertInput } from './upsert-sql.js';

/** A batch ready to write: one encoded record per `rawId`, sorted by it, and what was set aside. */
export interface PreparedBatch {
  records: EncodedTransaction[];
  rejected: RejectedRecord[];
}

/**
 * Encodes a batch: the last of several records with one `rawId` wins; a record that cannot be
 * encoded, or whose `ledgerHash` another record of the batch already has, is set aside as
 * rejected. Sorted by `rawId` so concurrent writers lock rows in one order.
 */
export function prepareBatch(
  records: readonly LedgerTx[],
  options: { now: Date; burnWindowMs: number },
): PreparedBatch {
  const byRawId = new Map<number, LedgerTx>();
  for (const tx of records) byRawId.set(tx.rawId, tx);
  const rejected: RejectedRecord[] = [];
  const encoded: EncodedTransaction[] = [];
  const hashOwner = new Map<string, number>();
  for (const tx of [...byRawId.values()].sort((a, b) => a.rawId - b.rawId)) {
    let item: EncodedTransaction;
    try {
      item = encodeTransaction(tx, { now: options.now, burnWindowMs: options.burnWindowMs });
    } catch (error) {
      if (!(error instanceof InvalidRecordError)) throw error;
      rejected.push(rejectedFrom(tx, error.reason, error.raw));
      continue;
    }
    const owner = hashOwner.get(item.row.ledger_hash);
    if (owner !== undefined) {
      rejected.push(rejectedFrom(tx, `ledgerHash is also the hash of rawId ${owner} in the same batch`));
      continue;
    }
    hashOwner.set(item.row.ledger_hash, tx.rawId);
    encoded.push(item);
  }
  return { records: encoded, rejected };
}

/** What {@link writeTransactions} did. */
export interface TransactionWriteResult {
  /** False when a page write was refused for a stale fence; then nothing was written. */
  fenced: boolean;
  inserted: number;
  updated: number;
  unchanged: number;
  /** Records refused because their `ledgerHash` is stored under another `rawId`. */
  conflicts: RejectedRecord[];
}

/**
 * Upserts encoded records keyed by `raw_id` in one statement. A row identical to the stored one
 * is not rewritten (no new row version, `updated_at` kept). A new row, or a changed `status` /
 * `internal_status`, appends a status-history row; a new row or changed `data` rewrites its
 * bundle items. The token tag is replaced by the `ledger_tokens` tag matching it (exact first,
 * then case-insensitive: the rule of `createTokenTagMatcher`). With `queueRechecks`, records not
 * final are queued for re-reading (keeping an existing schedule) and final ones leave the queue.
 */
export async function writeTransactions(
  executor: Executor,
  input: UpsertInput,
): Promise<TransactionWriteResult> {
  if (input.records.length === 0 && !input.page) {
    return { fenced: true, inserted: 0, updated: 0, unchanged: 0, conflicts: [] };
  }
  const query = buildUpsertQuery(input);
  type Result = { fenced: number; inserted: number; written: number; clashes: unknown };
  const [result] = input.prepared
    ? await queryRowsPrepared<Result>(executor, query)
    : await queryRows<Result>(executor, query);
  if (result === undefined) throw new Error('the upsert answered no row');
  const clashes = JSON.parse(String(result.clashes)) as Array<{
    raw_id: number;
    ledger_hash: string;
    other_raw_id: number;
  }>;
  const byRawId = new Map(input.records.map((r) => [r.row.raw_id, r]));
  const conflicts = clashes.map((c) => {
    const record = byRawId.get(Number(c.raw_id));
    return {
      reason: `ledgerHash ${c.ledger_hash} is already stored under rawId ${c.other_raw_id}`,
      raw: JSON.stringify(record?.row ?? c),
      rawId: Number(c.raw_id),
      ledgerHash: c.ledger_hash,
    };
  });
  const inserted = Number(result.inserted);
  const written = Number(result.written);
  return {
    fenced: Number(result.fenced) > 0,
    inserted,
    updated: written - inserted,
    unchanged: input.records.length - conflicts.length - written,
    conflicts,
  };
}

function rejectedFrom(tx: LedgerTx, reason: string, raw?: string): RejectedRecord {
  return {
    reason,
    raw: raw ?? JSON.stringify(tx),
    rawId: Number.isSafeInteger(tx.rawId) ? tx.rawId : undefined,
    ledgerHash: typeof tx.ledgerHash === 'string' && tx.ledgerHash !== '' ? tx.ledgerHash : undefined,
  };
}
