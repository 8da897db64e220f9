import { countConflictsByStream } from '../db/conflicts.js';
import {
  countListSetAside,
  countListStored,
  countStoredForStream,
  countUnkeyableKept,
  type ListStream,
} from '../db/list-counts.js';
import {
  countRawIdHoles,
  selectProvenRanges,
  selectRawIdHoles,
  selectStreams,
  selectUnstoredRawIds,
} from '../db/proof.js';
import { judgeStream, type StreamCompleteness } from '../sync/completeness-report.js';
import { type CountedPage, countList, type ListCount } from '../sync/list-count.js';
import { pageRawIds, pageSlots } from '../sync/page-links.js';
import { supportsParallelBackfill } from '../sync/parallel-backfill.js';
import type { FetchPage, StreamSpec } from '../sync/ports.js';
import type { AppContext } from './context.js';
import { createFetchPage } from './sync-adapters.js';

/**
 * Builds `verify`'s report for every stream in `sync_streams`: its proofs from the database, the
 * service's head and page count from page 1, the list's count at or below the watermark against
 * the table's (a few requests, O(log pages) where they differ, whatever the list's length), and
 * a record-by-record walk of the list in ascending page order (which only repeats) when it has
 * at most `walkLimit` pages.
 */
export async function verifyStreams(input: {
  app: Pick<AppContext, 'client' | 'database'>;
  walkLimit: number;
  signal?: AbortSignal | undefined;
}): Promise<StreamCompleteness[]> {
  const db = input.app.database.db;
  const fetchPage = createFetchPage(input.app.client, input.signal);
  const reports: StreamCompleteness[] = [];
  const conflicts = await countConflictsByStream(db);
  for (const stream of await selectStreams(db)) {
    const spec = stream.spec as StreamSpec;
    const list: ListStream = { ...spec, key: stream.key };
    const first = await fetchPage(spec, 1);
    const firstIds = pageRawIds(first);
    const serviceHead = firstIds.length > 0 ? Math.max(...firstIds) : null;
    const mark = stream.watermark ?? -1;
    let walked: { atOrBelow: number; above: number } | undefined;
    let unstored: number[] | undefined;
    if (first.totalPages <= input.walkLimit) {
      const seen = new Set<number>(firstIds);
      for (let page = 2; ; page++) {
        input.signal?.throwIfAborted();
        const served = await fetchPage(spec, page);
        const ids = pageRawIds(served);
        for (const id of ids) seen.add(id);
        if (ids.length === 0 || page >= served.totalPages) break;
      }
      const listed = [...seen].filter((id) => id <= mark);
      walked = { atOrBelow: listed.length, above: seen.size - listed.length };
      // Every stream, filtered or per account, is checked record by record against the table.
      unstored = await selectUnstoredRawIds(db, listed);
    }
    const count =
      stream.watermark === null
        ? undefined
        : await countStreamList({
            app: input.app,
            fetchPage,
            list,
            upTo: stream.watermark,
            signal: input.signal,
          });
    const global = supportsParallelBackfill(spec);
    reports.push(
      judgeStream({
        stream: stream.key,
        watermark: stream.watermark,
        proofRanges: await selectProvenRanges(db, stream.key),
        holes: global ? await selectRawIdHoles(db, mark, 20) : [],
        holeCount: global ? await countRawIdHoles(db, mark) : 0,
        serviceHead,
        totalPages: first.totalPages,
        walked,
        table: await countStoredForStream(db, { stream: list, rawId: mark }),
        count,
        rejected:
          stream.watermark === null
            ? undefined
            : {
                setAside: await countListSetAside(db, { stream: list, atOrBelow: stream.watermark }),
                unkeyableKept: await countUnkeyableKept(db, list),
              },
        conflicts: conflicts.get(stream.key) ?? 0,
        unstored,
      }),
    );
  }
  return reports;
}

/** The stream's list at or below `upTo` counted against the table, the missing records located. */
function countStreamList(input: {
  app: Pick<AppContext, 'database'>;
  fetchPage: FetchPage;
  list: ListStream;
  upTo: number;
  signal?: AbortSignal | undefined;
}): Promise<ListCount> {
  const db = input.app.database.db;
  const { list } = input;
  return countList(
    {
      async fetchPage(page): Promise<CountedPage> {
        const served = await input.fetchPage(list, page);
        return { slots: pageSlots(served), totalPages: served.totalPages };
      },
      countStored: ({ above, atOrBelow }) => countListStored(db, { stream: list, above, atOrBelow }),
      unstored: (rawIds) => selectUnstoredRawIds(db, rawIds),
    },
    { upTo: input.upTo, signal: input.signal },
  );
}
