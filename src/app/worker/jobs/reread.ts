import { parseJobPayload } from '../../../queue/jobs.js';
import type { JobProcessor } from '../../../queue/worker-deps.js';
import { rereadPending } from '../../../sync/reread/reread-pending.js';

/** Re-reads stored records that are not final yet (status changes, late fields): the job named `reconcile`. */
export const reread: JobProcessor = async (job, deps) => {
  const { limit, lists, overdueMs } = parseJobPayload('reconcile', job.data);
  const dialect = lists ? await deps.listDialect() : null;
  const result = await rereadPending({
    store: deps.syncStore,
    fetchByHash: deps.fetchByHash,
    fetchPage: deps.fetchPage,
    lists: dialect === 'page' ? {} : undefined,
    byKey: dialect === 'key' ? { fetchKeyPage: deps.fetchKeyPage, count: deps.keyCount() } : undefined,
    maxRecords: limit,
    dueBy: new Date(Date.now() - (overdueMs ?? 0)),
    concurrency: deps.inFlight?.() ?? deps.concurrency,
    signal: deps.signal,
    logger: deps.logger,
  });
  return {
    checked: result.checked,
    viaPages: result.viaPages,
    requests: result.requests,
    missing: result.missing,
    updated: result.counts.updated,
  };
};
