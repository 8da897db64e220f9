import { PAGE_SIZE, REREAD_LIMIT } from '../../../defaults.js';
import { isGlobalList } from '../../../domain/stream-key.js';
import { LeaseLostError } from '../../../errors.js';
import { deferIndexes, startBackfillIfNeeded, startCatchUp } from '../../../queue/backfill-flow.js';
import { parseJobPayload } from '../../../queue/jobs.js';
import { type JobProcessor, plannedStart } from '../../../queue/worker-deps.js';
import { CATCH_UP_ANSWERS } from '../../../sync/backfill/key-sync.js';
import { supportsParallelBackfill } from '../../../sync/backfill/page-range.js';
import { rereadPending } from '../../../sync/reread/reread-pending.js';
import { listsAfterWalk } from '../../../sync/reread/reread-plan.js';
import { walkByKey } from '../../../sync/walk/key-walk.js';
import { walkStream } from '../../../sync/walk/walk-stream.js';
import { pageWindow } from '../../sync-once.js';

/**
 * Syncs one stream: starts a parallel backfill of the global list when it was never synced,
 * else walks the stream (its tail, or the rest of a walk in progress) with the sync engine.
 * Another runner holding the stream's lease means the work is being done: the job ends quietly.
 */
export const syncStream: JobProcessor = async (job, deps) => {
  const { stream } = parseJobPayload('sync-stream', job.data);
  // Records due by the run's planned start are re-read: one read in a run is then due again
  // exactly as many runs later as the re-read delay spans, not one run early by the jitter.
  const startedAt = plannedStart(job);
  try {
    const dialect = await deps.listDialect();
    // A first backfill is split into range jobs: by key any stream (ranges of rawIds), by page
    // number only the global list (which counts its pages).
    if (deps.parallelBackfill && (dialect === 'key' || supportsParallelBackfill(stream))) {
      const backfill = await startBackfillIfNeeded(deps, stream, dialect);
      if (backfill) return backfill;
    }
    // A first walk into an empty mirror (`--sequential-backfill`) builds the read-side indexes at its end.
    await deferIndexes(deps, dialect);
    const common = {
      store: deps.syncStore,
      spec: stream,
      owner: deps.owner,
      leaseMs: deps.leaseMs,
      settleMs: deps.settleMs,
      signal: deps.signal,
      logger: deps.logger,
    };
    // By key, a tail begins at its head: the same request re-reads the records waiting there for
    // a status change (of the global list: the re-read below then leaves them alone).
    const result =
      dialect === 'key'
        ? await walkByKey({
            ...common,
            fetchKeyPage: deps.fetchKeyPage,
            headFirst: true,
            count: deps.keyCount(),
            // Far behind, the stretch goes to range jobs across the workers (a catch-up run).
            handOverAnswers: deps.parallelBackfill ? CATCH_UP_ANSWERS : undefined,
          })
        : await walkStream({
            ...common,
            fetchPage: deps.fetchPage,
            concurrency: () => pageWindow(deps.inFlight?.(PAGE_SIZE) ?? deps.concurrency, deps.concurrency),
            maxConcurrency: deps.concurrency,
          });
    await deps.recordDialect?.(result.key, dialect);
    if (result.behind !== undefined) {
      const caughtUp = await startCatchUp(deps, stream, result.behind);
      if (caughtUp) return caughtUp;
    }
    if (result.finished && !deps.signal.aborted) await deps.indexes?.restore({ whenIdle: true });
    // Records not final yet are re-read right after the walk of the global list, which read the
    // head pages already; the scheduled re-read job picks up the rest.
    const reread =
      isGlobalList(stream) && result.finished && !deps.signal.aborted
        ? await rereadPending({
            store: deps.syncStore,
            fetchByHash: deps.fetchByHash,
            fetchPage: deps.fetchPage,
            lists: dialect === 'page' ? listsAfterWalk(result) : undefined,
            byKey:
              dialect === 'key' ? { fetchKeyPage: deps.fetchKeyPage, count: deps.keyCount() } : undefined,
            maxRecords: REREAD_LIMIT,
            dueBy: startedAt,
            concurrency: deps.inFlight?.() ?? deps.concurrency,
            signal: deps.signal,
            logger: deps.logger,
          })
        : null;
    return {
      stream: result.key,
      mode: result.mode,
      pages: result.pages,
      watermark: result.watermark,
      ...(reread ? { reread: reread.checked, rereadRequests: reread.requests } : {}),
    };
  } catch (error) {
    await deps.forgetDialect?.(error);
    if (error instanceof LeaseLostError) {
      deps.logger.info({ stream: error.stream }, 'stream held by another runner, skipping');
      return { skipped: 'lease-held' };
    }
    throw error;
  }
};
