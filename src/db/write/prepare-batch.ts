/**
 * A batch's preparation before it is written, as a pure function: encoding, one version per
 * `rawId`, later sightings that disagree set aside as divergent, and what cannot be stored set
 * aside as rejected.
 */

import type { LedgerTx, RejectedRecord } from '../../domain/model.js';
import { InvalidRecordError } from '../../errors.js';
import { immutableDifferences } from '../schema/immutable-columns.js';
import { encodeTransaction } from './encode.js';
import type { ServedRecord } from './record-write-sql.js';

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
  const encodeOptions = {
    now: options.now,
    burnWindowMs: options.burnWindowMs,
    checkSignatures: options.checkSignatures === true,
  };
  const encode = (tx: LedgerTx) => encodeTransaction(tx, encodeOptions);
  const kept = new Map<number, { item: ServedRecord; tx: LedgerTx }>();
  const lastFailure = new Map<number, RejectedRecord>();
  const divergent: ServedRecord[] = [];
  const rejected: RejectedRecord[] = [];
  records.forEach((tx, index) => {
    const page = options.pages?.[index] ?? null;
    let item: ServedRecord;
    try {
      item = { ...encode(tx), page };
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

function rejectedFrom(tx: LedgerTx, reason: string, raw?: string): RejectedRecord {
  return {
    reason,
    raw: raw ?? JSON.stringify(tx),
    rawId: Number.isSafeInteger(tx.rawId) ? tx.rawId : undefined,
    ledgerHash: typeof tx.ledgerHash === 'string' && tx.ledgerHash !== '' ? tx.ledgerHash : undefined,
  };
}
