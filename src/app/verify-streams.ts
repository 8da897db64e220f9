import { countConflictsByStream } from '../db/conflicts.js';
import {
  countRawIdHoles,
  countStored,
  countStoredForStream,
  selectProvenRanges,
  selectRawIdHoles,
  selectStreams,
  selectUnstoredRawIds,
} from '../db/proof.js';
import { judgeStream, type StreamCompleteness } from '../sync/completeness-report.js';
import { pageRawIds } from '../sync/page-links.js';
import { supportsParallelBackfill } from '../sync/parallel-backfill.js';
import type { StreamSpec } from '../sync/ports.js';
import type { AppContext } from './context.js';
import { createFetchPage } from './sync-adapters.js';

/**
 * Builds `verify`'s report for every stream in `sync_streams`: its proofs from the database, the
 * service's head and page count from page 1, and an exact count by walking the list in ascending
 * page order (which only repeats) when it has at most `walkLimit` pages.
 */
export async function verifyStreams(input: {
  app: Pick<AppContext, 'client' | 'database'>;
  walkLimit: number;
  signal?: AbortSignal | undefined;
}): Promise<StreamCompleteness[]> {
  const db = input.app.database.db;
  const fetchPage = createFetchPage(input.app.client);
  const reports: StreamCompleteness[] = [];
  const conflicts = await countConflictsByStream(db);
  for (const stream of await selectStreams(db)) {
    const spec = stream.spec as StreamSpec;
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
        table: global
          ? await countStored(db, mark)
          : await countStoredForStream(db, { ...spec, key: stream.key, rawId: mark }),
        compareCounts: global,
        conflicts: conflicts.get(stream.key) ?? 0,
        unstored,
      }),
    );
  }
  return reports;
}
