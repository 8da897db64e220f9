import type { LedgerTx } from './model.js';
import type { FetchByHash, PendingRecord, SyncStore, WriteCounts } from './ports.js';
import { errorText, quietLogger, type SyncLogger } from './sync-logger.js';
import { addCounts, zeroCounts } from './write-counts.js';

/** What {@link reconcilePending} needs. */
export interface ReconcileInput {
  store: SyncStore;
  fetchByHash: FetchByHash;
  /** Records asked of the store per round. Default 200. */
  batchSize?: number;
  /** Look-ups in flight at once. Default 4. */
  concurrency?: number;
  /** Stop after this many records were re-read in this call. Default: no limit. */
  maxRecords?: number;
  signal?: AbortSignal | undefined;
  logger?: SyncLogger | undefined;
  now?: () => Date;
}

/** What one call of {@link reconcilePending} did. */
export interface ReconcileResult {
  /** Records looked up. */
  checked: number;
  /** Records the service no longer knows. */
  missing: number;
  /** Look-ups that failed (left due; the next run tries again). */
  failed: number;
  counts: WriteCounts;
}

/**
 * Re-reads the records that are not final yet (the store decides which are due and schedules the
 * next re-read of those still unsettled, with backoff) through the single-record look-up, until
 * none is due now. A look-up that fails is logged and left for the next run; it never fails the
 * sync, since the records are already stored.
 */
export async function reconcilePending(input: ReconcileInput): Promise<ReconcileResult> {
  const batchSize = input.batchSize ?? 200;
  const concurrency = Math.max(1, input.concurrency ?? 4);
  const logger = input.logger ?? quietLogger;
  const now = input.now ?? (() => new Date());
  const result: ReconcileResult = {
    checked: 0,
    missing: 0,
    failed: 0,
    counts: zeroCounts(),
  };
  // Hashes already looked at in this call: a record whose re-read failed stays due, and must not
  // be asked again and again within one run.
  const seen = new Set<string>();
  while (!input.signal?.aborted && (input.maxRecords === undefined || result.checked < input.maxRecords)) {
    const due = (await input.store.duePending(batchSize + seen.size, now())).filter(
      (pending) => !seen.has(pending.ledgerHash),
    );
    const room = input.maxRecords === undefined ? due.length : input.maxRecords - result.checked;
    const batch = due.slice(0, Math.min(batchSize, room));
    if (batch.length === 0) break;
    for (const pending of batch) seen.add(pending.ledgerHash);

    const records: LedgerTx[] = [];
    const missing: PendingRecord[] = [];
    await forEachLimited(batch, concurrency, async (pending) => {
      try {
        const tx = await input.fetchByHash(pending.ledgerHash);
        if (tx) records.push(tx);
        else missing.push(pending);
      } catch (error) {
        result.failed++;
        logger.warn(
          { raw_id: pending.rawId, ledger_hash: pending.ledgerHash, err: errorText(error) },
          're-read of a pending record failed; it stays due',
        );
      }
    });
    const counts = await input.store.commitReread({ records, missing, now: now() });
    result.checked += records.length + missing.length;
    result.missing += missing.length;
    addCounts(result.counts, counts);
  }
  logger.info(
    {
      checked: result.checked,
      updated: result.counts.updated,
      missing: result.missing,
      failed: result.failed,
    },
    'pending records re-read',
  );
  return result;
}

async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await run(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
