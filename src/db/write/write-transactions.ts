/**
 * The set-based write of a batch of records: encoding and de-duplication, then one statement
 * (see `upsert-sql.ts`) that upserts the rows, appends status history, rewrites bundle items and
 * (for pages) queues or clears re-reads.
 */

import type { LedgerTx, RejectedRecord } from '../../domain/model.js';
import { InvalidRecordError } from '../../errors.js';
import { type Executor, queryRows, queryRowsPrepared } from '../rows.js';
import { immutableDifferences } from '../schema/immutable-columns.js';
import { encodeTransaction } from './encode.js';
import { buildUpsertQuery, type ServedRecord, type UpsertInput } from './upsert-sql.js';

export { DEFAULT_RECHECK_POLICY, type RecheckPolicy, rescheduleRechecks } from './reread-queue.js';
export { buildUpsertQuery, type ServedRecord, type UpsertInput } from './upsert-sql.js';

/**
 * A batch ready to write: one encoded record per `rawId`, sorted by it, the later sightings whose
 * immutable fields differ from the kept one (written as conflicts, never stored), and what was
 * set aside.
 */
export interface PreparedBatch {
  records: ServedRecord[];
  divergent: ServedRecord[];
  rejected: RejectedRecord[];
}

/**
 * Encodes a batch of sightings in the order they were served (a record repeated by overlapping
 * pages comes several times). Per `rawId` the first sighting fixes the immutable fields; a later
 * one that agrees replaces it (status and the other changing fields move on; the page stays the
 * first one), one that disagrees is set aside as divergent. A record that cannot be encoded (its last sighting), or whose
 * `ledgerHash` another record of the batch already has, is rejected. Sorted by `rawId` so
 * concurrent writers lock rows in one order. `pages[i]` is the page of `records[i]`.
 */
export function prepareBatch(
  records: readonly LedgerTx[],
  options: {
    now: Date;
    burnWindowMs: number;
    pages?: readonly (number | null)[] | undefined;
    /** Recover EVM senders' signatures (see `encodeTransaction`). Default false. */
    checkSignatures?: boolean | undefined;
  },
): PreparedBatch {
  const kept = new Map<number, { item: ServedRecord; tx: LedgerTx }>();
  const lastFailure = new Map<number, RejectedRecord>();
  const divergent: ServedRecord[] = [];
  const rejected: RejectedRecord[] = [];
  records.forEach((tx, index) => {
    const page = options.pages?.[index] ?? null;
    let item: ServedRecord;
    try {
      const encoded = encodeTransaction(tx, {
        now: options.now,
        burnWindowMs: options.burnWindowMs,
        checkSignatures: options.checkSignatures === true,
      });
      item = { ...encoded, page };
    } catch (error) {
      if (!(error instanceof InvalidRecordError)) throw error;
      const failure = rejectedFrom(tx, error.reason, error.raw);
      if (Number.isSafeInteger(tx.rawId)) lastFailure.set(tx.rawId, failure);
      else rejected.push(failure);
      return;
    }
    lastFailure.delete(tx.rawId);
    const first = kept.get(tx.rawId)?.item;
    if (first === undefined) kept.set(tx.rawId, { item, tx });
    // The first page that served this version stays its page.
    else if (immutableDifferences(first.row, item.row).length === 0)
      kept.set(tx.rawId, { item: { ...item, page: first.page }, tx });
    else divergent.push(item);
  });
  rejected.push(...lastFailure.values());
  const encoded: ServedRecord[] = [];
  const hashOwner = new Map<string, number>();
  for (const { item, tx } of [...kept.values()].sort((a, b) => a.item.row.raw_id - b.item.row.raw_id)) {
    const owner = hashOwner.get(item.row.ledger_hash);
    if (owner !== undefined) {
      rejected.push(rejectedFrom(tx, `ledgerHash is also the hash of rawId ${owner} in the same batch`));
      continue;
    }
    hashOwner.set(item.row.ledger_hash, item.row.raw_id);
    encoded.push(item);
  }
  const stored = new Set(encoded.map((r) => r.row.raw_id));
  return { records: encoded, divergent: divergent.filter((d) => stored.has(d.row.raw_id)), rejected };
}

/** What {@link writeTransactions} did. */
export interface TransactionWriteResult {
  /** False when a page write was refused for a stale fence; then nothing was written. */
  fenced: boolean;
  inserted: number;
  updated: number;
  unchanged: number;
  /**
   * Sightings whose immutable fields differ from the version kept (the stored row, or the first
   * sighting of a new record): each is recorded in `ledger_tx_conflicts`, none is stored.
   */
  conflicts: number;
  /** The rawIds of `records` in conflict with the stored row (left as they were). */
  conflicted: number[];
  /** Records refused because their `ledgerHash` is stored under another `rawId`. */
  clashes: RejectedRecord[];
}

/**
 * Upserts encoded records keyed by `raw_id` in one statement. A row identical to the stored one
 * is not rewritten (no new row version, `updated_at` kept); a row whose immutable fields differ
 * from the stored one is not written either, but recorded as a conflict with both versions, as
 * are `divergent` sightings. A new row, or a changed `status` / `internal_status`, appends a
 * status-history row; a new row rewrites its bundle items. The token tag is replaced by the
 * `ledger_tokens` tag matching it (exact first, then case-insensitive: the rule of
 * `createTokenTagMatcher`). With `queueRechecks`, records not final are queued for re-reading
 * (keeping an existing schedule) and final ones leave the queue.
 */
export async function writeTransactions(
  executor: Executor,
  input: UpsertInput,
): Promise<TransactionWriteResult> {
  if (input.records.length === 0 && !input.page && !input.range) {
    return { fenced: true, inserted: 0, updated: 0, unchanged: 0, conflicts: 0, conflicted: [], clashes: [] };
  }
  const query = buildUpsertQuery(input);
  type Result = {
    fenced: number;
    inserted: number;
    written: number;
    conflicts: number;
    kept_conflicts: unknown;
    clashes: unknown;
  };
  const [result] = input.prepared
    ? await queryRowsPrepared<Result>(executor, query)
    : await queryRows<Result>(executor, query);
  if (result === undefined) throw new Error('the upsert answered no row');
  const clashRows = JSON.parse(String(result.clashes)) as Array<{
    raw_id: number;
    ledger_hash: string;
    other_raw_id: number;
  }>;
  const byRawId = new Map(input.records.map((r) => [r.row.raw_id, r]));
  const clashes = clashRows.map((c) => {
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
  const conflicted = (JSON.parse(String(result.kept_conflicts)) as unknown[]).map(Number);
  return {
    fenced: Number(result.fenced) > 0,
    inserted,
    updated: written - inserted,
    unchanged: input.records.length - clashes.length - written - conflicted.length,
    conflicts: Number(result.conflicts),
    conflicted,
    clashes,
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
