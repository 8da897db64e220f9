import type { ListDialect } from '../../client/api-types.js';
import {
  countRawIdHoles,
  selectProvenRanges,
  selectRawIdHoles,
  selectStreams,
  selectUnstoredRawIds,
} from '../../db/queries/backfill-proofs.js';
import { countConflictsByStream } from '../../db/queries/conflicts.js';
import {
  countListSetAside,
  countListStored,
  countStoredForStream,
  countUnkeyableKept,
  type ListStream,
} from '../../db/queries/list-counts.js';
import { pageRawIds, pageSlots } from '../../domain/page-links.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import { supportsParallelBackfill } from '../../sync/backfill/page-range.js';
import type { FetchPage } from '../../sync/ports/fetches.js';
import { screenPages } from '../../sync/raw-id-screen.js';
import { judgeStream, type StreamCompleteness } from '../../verify/completeness-report.js';
import { countList, type ListCount } from '../../verify/list-count.js';
import type { CountedPage } from '../../verify/list-position.js';
import type { AppContext } from '../context.js';
import { createFetchPage } from '../sync-adapters.js';
import { countStreamByKey } from './verify-by-key.js';

/**
 * Builds `verify`'s report for every stream in `sync_streams`, in the service's list dialect
 * (the configured one, or asked once with `auto`). By page numbers: its proofs from the
 * database, the service's head and page count from page 1, the list's count at or below the
 * watermark against the table's (a few requests, O(log pages) where they differ, whatever the
 * list's length), and a record-by-record walk of the list in ascending page order (which only
 * repeats) when it has at most `walkLimit` pages. By key: one walk of the whole list, ascending,
 * compared answer by answer with the table (see verify-by-key.ts).
 */
export async function verifyStreams(input: {
  app: Pick<AppContext, 'client' | 'database' | 'logger'>;
  walkLimit: number;
  signal?: AbortSignal | undefined;
}): Promise<{ dialect: ListDialect; streams: StreamCompleteness[] }> {
  const db = input.app.database.db;
  const dialect = await input.app.client.listDialect({ signal: input.signal });
  const reports: StreamCompleteness[] = [];
  const conflicts = await countConflictsByStream(db);
  for (const stream of await selectStreams(db)) {
    const spec = stream.spec as StreamSpec;
    const list: ListStream = { ...spec, key: stream.key };
    const mark = stream.watermark ?? -1;
    const global = supportsParallelBackfill(spec);
    const served =
      dialect === 'key'
        ? await readByKey({ app: input.app, list, upTo: mark, signal: input.signal })
        : await readByPage({ ...input, list, watermark: stream.watermark });
    const known = {
      stream: stream.key,
      watermark: stream.watermark,
      provenRanges: await selectProvenRanges(db, stream.key),
      holes: global ? await selectRawIdHoles(db, mark, 20) : [],
      holeCount: global ? await countRawIdHoles(db, mark) : 0,
      table: await countStoredForStream(db, { stream: list, rawId: mark }),
      rejected:
        stream.watermark === null
          ? undefined
          : {
              setAside: await countListSetAside(db, { stream: list, atOrBelow: stream.watermark }),
              unkeyableKept: await countUnkeyableKept(db, list),
            },
      conflicts: conflicts.get(stream.key) ?? 0,
      settled: stream.settled,
    };
    reports.push(judgeStream({ ...known, ...served }));
  }
  return { dialect, streams: reports };
}

/** What the service's list says, as `judgeStream` takes it. */
type Served = Pick<
  Parameters<typeof judgeStream>[0],
  'serviceHead' | 'totalPages' | 'walked' | 'count' | 'unstored' | 'dialect' | 'requests' | 'listedInAll'
>;

/** One walk of the list by key, compared with the table at or below the watermark as it goes. */
async function readByKey(input: {
  app: Pick<AppContext, 'client' | 'database' | 'logger'>;
  list: ListStream;
  upTo: number;
  signal?: AbortSignal | undefined;
}): Promise<Served> {
  const { count, head, walked } = await countStreamByKey(input);
  const settled = count.unsettled === null;
  return {
    dialect: 'key',
    serviceHead: head,
    totalPages: 0,
    walked: settled ? walked : undefined,
    count: input.upTo < 0 ? undefined : count,
    listedInAll: settled ? (count.listed ?? 0) + (count.above ?? 0) : undefined,
    requests: count.requests,
  };
}

/** Page 1, a walk of a short list, and the count at or below the watermark, by page numbers. */
async function readByPage(input: {
  app: Pick<AppContext, 'client' | 'database' | 'logger'>;
  walkLimit: number;
  list: ListStream;
  watermark: number | null;
  signal?: AbortSignal | undefined;
}): Promise<Served> {
  const db = input.app.database.db;
  const { list } = input;
  let requests = 0;
  // Counted as a walk reads the list: a record the service does not vouch for is no record of it.
  const fetchAny = screenPages(createFetchPage(input.app.client, input.signal), input.app.logger);
  const fetchPage: FetchPage = (spec, page) => {
    requests += 1;
    return fetchAny(spec, page);
  };
  const first = await fetchPage(list, 1);
  const firstIds = pageRawIds(first);
  const mark = input.watermark ?? -1;
  let walked: { atOrBelow: number; above: number } | undefined;
  let unstored: number[] | undefined;
  if (first.totalPages <= input.walkLimit) {
    const seen = new Set<number>(firstIds);
    for (let page = 2; ; page++) {
      input.signal?.throwIfAborted();
      const served = await fetchPage(list, page);
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
    input.watermark === null
      ? undefined
      : await countStreamList({
          app: input.app,
          fetchPage,
          list,
          upTo: input.watermark,
          signal: input.signal,
        });
  return {
    dialect: 'page',
    serviceHead: firstIds.length > 0 ? Math.max(...firstIds) : null,
    totalPages: first.totalPages,
    walked,
    count,
    unstored,
    requests,
  };
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
