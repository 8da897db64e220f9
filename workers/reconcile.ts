import { jobFailure } from '../src/queue/job-errors.js';
import { parseJobPayload } from '../src/queue/jobs.js';
import type { JobProcessor } from '../src/queue/worker-deps.js';
import { reconcilePending } from '../src/sync/reconcile.js';

/** Re-reads stored records that are not final yet (status changes, late fields). */
export const reconcile: JobProcessor = async (job, deps) => {
  const { limit } = parseJobPayload('reconcile', job.data);
  try {
    const result = await reconcilePending({
      store: deps.syncStore,
      fetchByHash: deps.fetchByHash,
      maxRecords: limit,
      concurrency: deps.concurrency,
      signal: deps.signal,
      logger: deps.logger,
    });
    return { checked: result.checked, missing: result.missing, updated: result.counts.updated };
  } catch (error) {
    throw jobFailure(error);
  }
};
