/**
 * The record tables of the in-memory store (`memory-store.ts`): stored records, the re-read queue
 * and rejected records, written as the PostgreSQL store's statements write them. Records are
 * encoded and checked by the store's own pure `prepareBatch`, so what is rejected or counted as
 * unchanged is the same.
 */

import { immutableDifferences } from '../../src/db/schema/immutable-columns.js';
import type { PendingReason, TransactionRow } from '../../src/db/write/encode.js';
import { prepareBatch } from '../../src/db/write/prepare-batch.js';
import {
  DEFAULT_REREAD_POLICY,
  nextRereadDelay,
  type RereadPolicy,
} from '../../src/db/write/reread-queue.js';
import type { LedgerTx, RejectedRecord } from '../../src/domain/model.js';
import type { PendingRecord, WriteCounts } from '../../src/sync/ports/sync-store.js';

/** A re-read queue entry. */
export interface MemoryReread {
  /** ms since the epoch. */
  dueAt: number;
  attempts: number;
  /** Why it is not final at its last read. */
  pending?: string;
  /** Reads in a row that found it as it was. */
  unchanged?: number;
}

/** A rejected record, kept once per distinct reason and raw text with its sightings. */
export interface MemoryRejected extends RejectedRecord {
  stream: string | null;
  page: number | null;
  seenCount: number;
}

/** What one batch write did, before its rejected records are stored. */
export interface BatchWrite {
  counts: WriteCounts;
  /** Set aside by encoding, plus refused for a ledgerHash stored under another rawId. */
  refused: RejectedRecord[];
  /** The records written or found unchanged, with why each is not final yet. */
  kept: Array<{ rawId: number; pending: PendingReason }>;
}

/** Stored records, their re-read queue and rejected records. */
export class MemoryRecords {
  /** Stored records by rawId (tests may seed it directly). */
  readonly rows = new Map<number, LedgerTx>();
  /** When each record was first stored (ms since the epoch). */
  readonly firstSeen = new Map<number, number>();
  /** The re-read queue by rawId (only stored records). */
  readonly rechecks = new Map<number, MemoryReread>();
  readonly rejected: MemoryRejected[] = [];
  protected readonly policy: RereadPolicy;

  constructor(recheck: Partial<RereadPolicy> = {}) {
    this.policy = { ...DEFAULT_REREAD_POLICY, ...recheck };
  }

  /** Stored records, and rejected records not stored, with a rawId above `rawId`. */
  countAbove(rawId: number): number {
    const ids = new Set([...this.rows.keys()].filter((id) => id > rawId));
    for (const r of this.rejected) if (r.rawId !== undefined && r.rawId > rawId) ids.add(r.rawId);
    return ids.size;
  }

  /** The queued records due at `now`, in the order `duePending` answers them. */
  dueAt(now: Date): PendingRecord[] {
    return [...this.rechecks.entries()]
      .filter(([rawId, r]) => r.dueAt <= now.getTime() && this.rows.has(rawId))
      .sort(([a, x], [b, y]) => x.dueAt - y.dueAt || a - b)
      .map(([rawId, r]) => ({
        rawId,
        ledgerHash: this.rows.get(rawId)?.ledgerHash ?? '',
        attempts: r.attempts,
      }));
  }

  /**
   * Upserts a batch as the page-write statement does: the last record of a rawId wins, a record
   * identical to the stored one is not rewritten, one whose ledgerHash is stored under another
   * rawId is refused. With `queue`, records not final join the re-read queue (an existing
   * schedule is kept) and final ones leave it.
   */
  protected writeBatch(records: readonly LedgerTx[], at: Date, queue: boolean): BatchWrite {
    const prepared = prepareBatch(records, { now: at, burnWindowMs: this.policy.burnWindowMs });
    const latest = latestAgreeing(records, at, this.policy);
    const hashOwner = new Map([...this.rows.values()].map((tx) => [tx.ledgerHash, tx.rawId]));
    const counts: WriteCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 };
    // A later sighting in the batch whose immutable fields differ from the first is a conflict.
    counts.conflicts += prepared.divergent.length;
    const refused: RejectedRecord[] = [...prepared.rejected];
    const kept: BatchWrite['kept'] = [];
    for (const item of prepared.records) {
      const rawId = item.row.raw_id;
      if (queue && item.pending === null) this.rechecks.delete(rawId);
      const other = hashOwner.get(item.row.ledger_hash);
      if (other !== undefined && other !== rawId) {
        const reason = `ledgerHash ${item.row.ledger_hash} is already stored under rawId ${other}`;
        refused.push({ reason, raw: JSON.stringify(item.row), rawId, ledgerHash: item.row.ledger_hash });
        continue;
      }
      kept.push({ rawId, pending: item.pending });
      const before = this.rows.get(rawId);
      if (before !== undefined && conflicting(before, item.row, at, this.policy)) {
        // Other immutable fields than the stored record's: the stored record is kept.
        counts.conflicts++;
        continue;
      }
      const queued = this.rechecks.get(rawId);
      if (queue && item.pending !== null && queued !== undefined) {
        // Seen on a page: just read, not due before the re-read delay from now.
        queued.dueAt = Math.max(queued.dueAt, at.getTime() + this.policy.recheckAfterMs);
        if (queued.pending !== item.pending) queued.unchanged = 0;
        queued.pending = item.pending;
      }
      if (before !== undefined && sameRow(before, item.row, at, this.policy)) {
        counts.unchanged++;
        continue;
      }
      if (before === undefined) {
        counts.inserted++;
        this.firstSeen.set(rawId, at.getTime());
      } else counts.updated++;
      this.rows.set(rawId, structuredClone(latest.get(rawId) as LedgerTx));
      if (queue && item.pending !== null && !this.rechecks.has(rawId)) {
        this.rechecks.set(rawId, {
          dueAt: at.getTime() + this.policy.recheckAfterMs,
          attempts: 0,
          pending: item.pending,
          unchanged: 0,
        });
      }
    }
    return { counts, refused, kept };
  }

  /** After a re-read: the next re-read with backoff, or off the queue when final or given up on. */
  protected reschedule(
    reread: ReadonlyArray<{ rawId: number; pending: PendingReason | 'missing' }>,
    now: Date,
  ): void {
    const { burnWindowMs } = this.policy;
    const done = new Set<number>();
    for (const { rawId, pending } of reread) {
      const entry = this.rechecks.get(rawId);
      if (entry === undefined || done.has(rawId)) continue;
      done.add(rawId);
      const firstSeen = this.firstSeen.get(rawId) ?? now.getTime();
      const gone = this.rows.has(rawId) && (pending === null || firstSeen < now.getTime() - burnWindowMs);
      if (gone) {
        this.rechecks.delete(rawId);
        continue;
      }
      const unchanged = entry.pending === pending ? (entry.unchanged ?? 0) + 1 : 0;
      const delay = nextRereadDelay(this.policy, {
        ageMs: now.getTime() - firstSeen,
        unchanged,
        attempts: entry.attempts,
        before: entry.pending ?? null,
        after: pending,
      });
      entry.attempts++;
      entry.pending = pending ?? 'missing';
      entry.unchanged = unchanged;
      entry.dueAt = now.getTime() + delay;
    }
  }

  /** Keeps rejected records once per distinct reason and raw text, noting the latest stream and page. */
  protected keepRejected(
    rejected: readonly RejectedRecord[],
    stream: string | null,
    page: number | null,
  ): void {
    for (const record of rejected) {
      const seen = this.rejected.find((r) => r.reason === record.reason && r.raw === record.raw);
      if (seen === undefined) {
        this.rejected.push({ ...record, stream, page, seenCount: 1 });
        continue;
      }
      seen.seenCount++;
      seen.stream = stream ?? seen.stream;
      seen.page = page ?? seen.page;
    }
  }
}

/** Whether the stored record encodes to exactly `row` (every column the upsert compares). */
/** Per rawId, the last sighting of the batch that agrees with the first one's immutable fields. */
function latestAgreeing(records: readonly LedgerTx[], at: Date, policy: RereadPolicy): Map<number, LedgerTx> {
  const first = new Map<number, LedgerTx>();
  const latest = new Map<number, LedgerTx>();
  for (const tx of records) {
    const seen = first.get(tx.rawId);
    if (seen === undefined) first.set(tx.rawId, tx);
    const [row] = prepareBatch([tx], { now: at, burnWindowMs: policy.burnWindowMs }).records;
    if (seen === undefined || (row !== undefined && !conflicting(seen, row.row, at, policy)))
      latest.set(tx.rawId, tx);
  }
  return latest;
}

function conflicting(stored: LedgerTx, row: TransactionRow, at: Date, policy: RereadPolicy): boolean {
  const [encoded] = prepareBatch([stored], { now: at, burnWindowMs: policy.burnWindowMs }).records;
  return encoded !== undefined && immutableDifferences(encoded.row, row).length > 0;
}

function sameRow(stored: LedgerTx, row: unknown, at: Date, policy: RereadPolicy): boolean {
  const [encoded] = prepareBatch([stored], { now: at, burnWindowMs: policy.burnWindowMs }).records;
  return encoded !== undefined && JSON.stringify(encoded.row) === JSON.stringify(row);
}
