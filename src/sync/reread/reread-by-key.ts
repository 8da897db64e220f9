/**
 * Re-reads by key: the records waiting for a status change are known by rawId, and a key answer
 * from just below one of them reads the next `count` records of the global list. The fewest
 * answers that cover them are planned from their ranks among the stored records (how many are
 * above each); a record an answer would carry with too few others is looked up on its own.
 * Burns, which wait longest (for their target-chain hash) and lie spread far down the global
 * list, are read through the burn list (`action=burn`), where they lie close together: one
 * answer re-reads every burn still waiting, so they fall due again together.
 */
import type { LedgerTx } from '../../domain/model.js';
import type { FetchKeyPage } from '../ports/fetches.js';
import type { ClaimedRecord } from '../ports/sync-store.js';
import { REREAD_LISTS } from './reread-plan.js';

/** One planned key answer of `list`: from `cursor` (exclusive), expected to carry `covers`. */
export interface KeyRead {
  list: 'global' | 'burns';
  cursor: number;
  covers: ClaimedRecord[];
}

/** The plan of a round of re-reads by key. */
export interface KeyRereadPlan {
  reads: KeyRead[];
  lookups: ClaimedRecord[];
}

/**
 * Plans key answers over `due`: ascending from the lowest record, an answer from just below it
 * carries every due record whose rank lies within `count` of its own; in the global list it is
 * read when it carries at least `minPerRead` of them (default 2), else that record is looked up
 * alone. Burns with a rank in the burn list are read there, even one alone: its answer re-reads
 * the burns waiting beside it too. Records without a rank (deeper than the claim counts) are
 * looked up.
 */
export function planKeyRereads(
  due: readonly ClaimedRecord[],
  input: { count: number; minPerRead?: number | undefined },
): KeyRereadPlan {
  const burns = cover(
    due.filter((record) => record.burnRank !== null),
    { list: 'burns', rank: (record) => record.burnRank, count: input.count, minPerRead: 1 },
  );
  const global = cover(
    due.filter((record) => record.burnRank === null),
    {
      list: 'global',
      rank: (record) => record.listRank,
      count: input.count,
      // An answer costs a request, as a look-up does: it pays from two records on.
      minPerRead: Math.max(1, input.minPerRead ?? 2),
    },
  );
  return { reads: [...global.reads, ...burns.reads], lookups: [...global.lookups, ...burns.lookups] };
}

/** The answers of one list that cover `due` by their ranks in it (see {@link planKeyRereads}). */
function cover(
  due: readonly ClaimedRecord[],
  input: {
    list: KeyRead['list'];
    rank: (record: ClaimedRecord) => number | null;
    count: number;
    minPerRead: number;
  },
): KeyRereadPlan {
  const { list, rank, count, minPerRead } = input;
  const ranked = due.filter((record) => rank(record) !== null).sort((a, b) => a.rawId - b.rawId);
  const lookups = due.filter((record) => rank(record) === null);
  const reads: KeyRead[] = [];
  let i = 0;
  while (i < ranked.length) {
    const first = ranked[i]!;
    const top = rank(first)! - count + 1;
    let j = i;
    while (j < ranked.length && rank(ranked[j]!)! >= top) j++;
    const covers = ranked.slice(i, j);
    if (covers.length >= minPerRead) {
      reads.push({ list, cursor: Math.max(0, first.rawId - 1), covers });
      i = j;
    } else {
      lookups.push(first);
      i++;
    }
  }
  return { reads, lookups };
}

/**
 * Reads the planned answers (`limit` at once) from the global list by key; returns the due
 * records they showed, the other records they showed, and the due records an answer should have
 * carried but did not (to be looked up: the list moved, or the service no longer lists them).
 * A failed answer's records are looked up too.
 */
export async function readKeyRereads(input: {
  reads: readonly KeyRead[];
  fetchKeyPage: FetchKeyPage;
  count: number;
  limit: number;
  signal?: AbortSignal | undefined;
  onFailure: (cursor: number, error: unknown) => void;
}): Promise<{ found: Map<number, LedgerTx>; seen: LedgerTx[]; unseen: ClaimedRecord[]; requests: number }> {
  const found = new Map<number, LedgerTx>();
  const others = new Map<number, LedgerTx>();
  const unseen: ClaimedRecord[] = [];
  let requests = 0;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < input.reads.length && !input.signal?.aborted) {
      const read = input.reads[next++]!;
      const wanted = new Set(read.covers.map((record) => record.rawId));
      requests++;
      try {
        const served = await input.fetchKeyPage(REREAD_LISTS[read.list], {
          cursor: read.cursor,
          count: input.count,
        });
        for (const tx of served.txs) (wanted.has(tx.rawId) ? found : others).set(tx.rawId, tx);
        unseen.push(...read.covers.filter((record) => !found.has(record.rawId)));
      } catch (error) {
        input.onFailure(read.cursor, error);
        unseen.push(...read.covers);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, input.limit), input.reads.length) }, lane));
  for (const rawId of found.keys()) others.delete(rawId);
  return { found, seen: [...others.values()], unseen, requests };
}
