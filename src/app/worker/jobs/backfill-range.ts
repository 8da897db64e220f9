import { SETTLE_MS } from '../../../defaults.js';
import { parseJobPayload } from '../../../queue/jobs.js';
import type { JobProcessor } from '../../../queue/worker-deps.js';
import { fetchKeyRange } from '../../../sync/backfill/key-backfill.js';
import { fetchRange } from '../../../sync/backfill/page-range.js';
import { runSettling } from '../../../sync/backfill/run-check.js';

/** Fetches one stretch of the list for a parallel backfill, storing what it proves. */
export const backfillRange: JobProcessor = async (job, deps) => {
  const payload = parseJobPayload('backfill-range', job.data);
  // The run's head time: gaps its pages show before they could settle keep the stream's mark below them.
  const run = await deps.backfillStore.getRun(payload.backfillId);
  const settle = run ? runSettling(run, deps.settleMs ?? SETTLE_MS) : undefined;
  if ('upTo' in payload) {
    const { stream, backfillId, after, upTo } = payload;
    const result = await fetchKeyRange({
      store: deps.backfillStore,
      fetchKeyPage: deps.fetchKeyPage,
      fetchKeyText: deps.fetchKeyText,
      spec: stream,
      backfillId,
      task: { after, upTo },
      // A retried job resumes after its last committed answer.
      onProgress: (resume) => job.updateData({ ...payload, ...resume }),
      signal: deps.signal,
      logger: deps.logger,
      settle,
    });
    return { requests: result.pages, records: result.records, inserted: result.counts.inserted };
  }
  const { stream, backfillId, fromPage, toPage, stopBelowRawId, seekRawId, previousLow } = payload;
  const result = await fetchRange({
    store: deps.backfillStore,
    fetchPage: deps.fetchPage,
    spec: stream,
    backfillId,
    task: { fromPage, toPage, stopBelowRawId, seekRawId, previousLow },
    // A retried job (429 pause, crash, stall) resumes after its last committed page.
    onProgress: (resume) => job.updateData({ ...payload, ...resume }),
    // On shutdown the range stops at the next page, after committing what it fetched; the
    // job's next attempt resumes there.
    signal: deps.signal,
    logger: deps.logger,
    settle,
    // A range reads on past where the next one began, in whichever worker (see `RangeStarts`).
    starts: deps.rangeStarts?.(backfillId),
  });
  return { pages: result.pages, records: result.records, inserted: result.counts.inserted };
};
