import { REREAD_DEFAULTS } from '../../defaults.js';
import type { LedgerTx } from '../../domain/model.js';
import type { FetchByHash, FetchKeyPage, FetchPage } from '../ports/fetches.js';
import type { ClaimedRecord, PendingRecord, SyncStore, WriteCounts } from '../ports/sync-store.js';
import { errorText, quietLogger, type SyncLogger } from '../sync-logger.js';
import { addCounts, zeroCounts } from '../write-counts.js';
import { planKeyRereads, readKeyRereads } from './reread-by-key.js';
import {
  LIST_NAMES,
  type ListRead,
  listShift,
  pageOf,
  placeOnPages,
  planRereads,
  REREAD_LISTS,
  type RereadLists,
  type RereadPlan,
  rankIn,
} from './reread-plan.js';

/** What {@link rereadPending} needs. */
export interface RereadInput {
  store: SyncStore;
  fetchByHash: FetchByHash;
  /**
   * List pages, to re-read records near the head of the global list (or the burn list) ten per
   * request. Without it, or without `lists`, every record is looked up on its own.
   */
  fetchPage?: FetchPage | undefined;
  /**
   * Re-read through the lists: only when the global list is mirrored (a stream walk of it
   * completed), so a record's rank among the stored ones is its place in the list.
   */
  lists?: RereadLists | undefined;
  /**
   * Re-read through the global list by key (the deployed dialect), `count` records an answer:
   * only when the global list is mirrored, like `lists`. Takes the place of `lists`.
   */
  byKey?: { fetchKeyPage: FetchKeyPage; count: number } | undefined;
  /** Records claimed per round. Default 1000. */
  batchSize?: number;
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  /** Stop after this many records were re-read in this call. Default: no limit. */
  maxRecords?: number;
  /**
   * Records due by this time are re-read. Default: the time the call starts. A run passes the time
   * it began, so what it read itself (its walk's pages) is not due again in the same run, and a
   * record read in one run is due in the run `LEDGER_RECHECK_AFTER_MS` later, whatever the walk's
   * duration (the due time counts from the read; comparing it with a later "now" would make a
   * record due a run early on a schedule as long as the re-read delay).
   */
  dueBy?: Date | undefined;
  /** The one-shot sync's lease owner, kept with its claims (`SyncStore.claimDue`). */
  owner?: string | undefined;
  signal?: AbortSignal | undefined;
  logger?: SyncLogger | undefined;
  now?: () => Date;
}

/** What one call of {@link rereadPending} did. */
export interface RereadResult {
  /** Records re-read (through a list page or a look-up). */
  checked: number;
  /** Of those, re-read through list pages. */
  viaPages: number;
  /** Requests made: list pages and look-ups. */
  requests: number;
  /** Records the service no longer knows (404 on look-up): kept, and read again later. */
  missing: number;
  /** Look-ups that failed (read again once their claim lapses, or from the next `sync` on). */
  failed: number;
  counts: WriteCounts;
}

/** Deepest list rank worth asking the store for: beyond it, a look-up is cheaper anyway. */
const RANK_LIMIT = 500;

/**
 * Re-reads the records that are not final yet and are due (the store claims them, and schedules
 * the next read of those still unsettled), until none is due now. A plan per round picks list
 * pages for records near the head and look-ups for the rest; a record a page was expected to show
 * but did not (the list moved) is looked up. A request that fails is logged and its records left
 * for a later run; it never fails the sync, since the records are already stored.
 */
export async function rereadPending(input: RereadInput): Promise<RereadResult> {
  const batchSize = input.batchSize ?? 1000;
  const logger = input.logger ?? quietLogger;
  const now = input.now ?? (() => new Date());
  const result: RereadResult = {
    checked: 0,
    viaPages: 0,
    requests: 0,
    missing: 0,
    failed: 0,
    counts: zeroCounts(),
  };
  const useKeys = input.byKey !== undefined;
  const useLists = !useKeys && input.fetchPage !== undefined && input.lists !== undefined;
  const dueBy = input.dueBy ?? now();
  let globalPagesRead = input.lists?.globalPagesRead ?? 0;
  while (!input.signal?.aborted && (input.maxRecords === undefined || result.checked < input.maxRecords)) {
    const room =
      input.maxRecords === undefined ? batchSize : Math.min(batchSize, input.maxRecords - result.checked);
    // Claimed from now: a run that began long ago (a long backfill) still keeps others off them.
    const due = await input.store.claimDue(room, now(), {
      rankLimit: useLists || useKeys ? RANK_LIMIT : 0,
      dueBy,
      owner: input.owner,
    });
    if (due.length === 0) break;
    if (input.byKey) {
      await lookUp(input, await rereadByKey(input, input.byKey, due, { result, now }), result, now);
      continue;
    }
    const plan = useLists
      ? planRereads(due, { ...input.lists, globalPagesRead })
      : { reads: [], lookups: due, requests: due.length };
    let rest: ClaimedRecord[] = plan.lookups;
    if (plan.reads.length > 0 && input.fetchPage) {
      const { found, seen, globalPages } = await readLists(input, input.fetchPage, plan, due, {
        globalPagesRead,
        result,
      });
      rest = due.filter((record) => !found.has(record.rawId));
      const records = [...found.values()];
      // The other queued records on those pages were read too: their next read moves with
      // these, so later runs read them together instead of a few per run.
      addCounts(result.counts, await input.store.commitReread({ records, missing: [], now: now(), seen }));
      result.checked += records.length;
      result.viaPages += records.length;
      // The head pages read once in this call are not read again for the next round.
      globalPagesRead = contiguousFrom(globalPagesRead, globalPages);
    }
    await lookUp(input, rest, result, now);
  }
  logger.info(
    {
      checked: result.checked,
      via_pages: result.viaPages,
      requests: result.requests,
      updated: result.counts.updated,
      missing: result.missing,
      failed: result.failed,
    },
    'pending records re-read',
  );
  return result;
}

/**
 * Reads the planned list pages; returns the due records they showed, by rawId, and the global
 * pages read. The first planned page of each list is read alone: where it shows the due records
 * tells how far arrivals moved the list since their ranks were counted, and the rest are placed
 * again by that before their pages are read.
 */
async function readLists(
  input: RereadInput,
  fetchPage: FetchPage,
  plan: RereadPlan<ClaimedRecord>,
  due: readonly ClaimedRecord[],
  context: { globalPagesRead: number; result: RereadResult },
): Promise<{ found: Map<number, LedgerTx>; seen: LedgerTx[]; globalPages: number[] }> {
  const { result, globalPagesRead } = context;
  const logger = input.logger ?? quietLogger;
  const wanted = new Set(due.map((record) => record.rawId));
  const found = new Map<number, LedgerTx>();
  const others = new Map<number, LedgerTx>();
  const read = new Set<string>();
  const globalPages: number[] = [];
  const readPage = async ({
    list,
    page,
  }: {
    list: ListRead['list'];
    page: number;
  }): Promise<number[] | null> => {
    if (input.signal?.aborted) return null;
    result.requests++;
    read.add(`${list}:${page}`);
    if (list === 'global') globalPages.push(page);
    try {
      const served = await fetchPage(REREAD_LISTS[list], page);
      for (const tx of served.txs) (wanted.has(tx.rawId) ? found : others).set(tx.rawId, tx);
      return served.txs.map((tx) => tx.rawId);
    } catch (error) {
      logger.warn(
        { list, page, err: errorText(error) },
        're-read of a list page failed; its records are looked up',
      );
      return null;
    }
  };
  const shifts = { global: 0, burns: 0 };
  const firsts = LIST_NAMES.flatMap((list) => {
    const first = plan.reads.find((r) => r.list === list);
    return first ? [{ list, page: first.fromPage }] : [];
  });
  await Promise.all(
    firsts.map(async (first) => {
      const rawIds = await readPage(first);
      const expected = due.flatMap((record) => {
        const rank = rankIn(record, first.list);
        return rank !== null && pageOf(rank) === first.page ? [{ rawId: record.rawId, rank }] : [];
      });
      const shift = rawIds === null ? null : listShift({ page: first.page, rawIds }, expected);
      if (shift !== null) shifts[first.list] = shift;
    }),
  );
  const lookedUp = new Set(plan.lookups.map((record) => record.rawId));
  const again = placeOnPages(
    due.filter((record) => !found.has(record.rawId) && !lookedUp.has(record.rawId)),
    {
      globalPagesRead,
      maxPages: input.lists?.maxPages ?? REREAD_DEFAULTS.maxListPages,
      shifts,
      skip: (list, page) => read.has(`${list}:${page}`) || (list === 'global' && page <= globalPagesRead),
    },
  );
  const pages = again.reads.flatMap((r) =>
    Array.from({ length: r.toPage - r.fromPage + 1 }, (_, i) => ({ list: r.list, page: r.fromPage + i })),
  );
  await forEachLimited(pages, Math.max(1, input.concurrency ?? REREAD_DEFAULTS.concurrency), async (page) => {
    await readPage(page);
  });
  for (const rawId of found.keys()) others.delete(rawId);
  logger.debug(
    { due: due.length, pages: [...read], shifts, found: found.size, planned_lookups: plan.lookups.length },
    'list pages re-read',
  );
  return { found, seen: [...others.values()], globalPages };
}

/**
 * Re-reads due records through key answers of the global list where enough of them lie close
 * together, commits what the answers showed, and returns the records left to look up.
 */
async function rereadByKey(
  input: RereadInput,
  byKey: NonNullable<RereadInput['byKey']>,
  due: readonly ClaimedRecord[],
  context: { result: RereadResult; now: () => Date },
): Promise<ClaimedRecord[]> {
  const { result, now } = context;
  const logger = input.logger ?? quietLogger;
  const plan = planKeyRereads(due, { count: byKey.count });
  if (plan.reads.length === 0) return plan.lookups;
  const read = await readKeyRereads({
    reads: plan.reads,
    fetchKeyPage: byKey.fetchKeyPage,
    count: byKey.count,
    limit: input.concurrency ?? REREAD_DEFAULTS.concurrency,
    signal: input.signal,
    onFailure: (cursor, error) =>
      logger.warn({ cursor, err: errorText(error) }, 're-read by key failed; its records are looked up'),
  });
  result.requests += read.requests;
  const records = [...read.found.values()];
  addCounts(
    result.counts,
    await input.store.commitReread({ records, missing: [], now: now(), seen: read.seen }),
  );
  result.checked += records.length;
  result.viaPages += records.length;
  return [...plan.lookups, ...read.unseen];
}

/** Looks records up one by one and commits what was found, and what the service no longer knows. */
async function lookUp(
  input: RereadInput,
  due: readonly ClaimedRecord[],
  result: RereadResult,
  now: () => Date,
): Promise<void> {
  if (due.length === 0) return;
  const logger = input.logger ?? quietLogger;
  const records: LedgerTx[] = [];
  const missing: PendingRecord[] = [];
  await forEachLimited(
    due,
    Math.max(1, input.concurrency ?? REREAD_DEFAULTS.concurrency),
    async (pending) => {
      if (input.signal?.aborted) return;
      result.requests++;
      try {
        const tx = await input.fetchByHash(pending.ledgerHash);
        if (tx) records.push(tx);
        else missing.push(pending);
      } catch (error) {
        result.failed++;
        logger.warn(
          { raw_id: pending.rawId, ledger_hash: pending.ledgerHash, err: errorText(error) },
          're-read of a pending record failed; it is read again later',
        );
      }
    },
  );
  if (missing.length > 0)
    logger.warn(
      { raw_ids: missing.map((m) => m.rawId).slice(0, 20), count: missing.length },
      'the service no longer knows these stored records; they are kept and read again later',
    );
  addCounts(result.counts, await input.store.commitReread({ records, missing, now: now() }));
  result.checked += records.length + missing.length;
  result.missing += missing.length;
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

/** The pages 1..N read, from `read` (1..read read before) and the pages read since. */
function contiguousFrom(read: number, pages: readonly number[]): number {
  const seen = new Set(pages);
  let depth = read;
  while (seen.has(depth + 1)) depth++;
  return depth;
}
