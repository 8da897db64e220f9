import { enqueueBackfillRound } from '../../queue/backfill-flow.js';
import { parseJobPayload } from '../../queue/jobs.js';
import type { JobProcessor } from '../../queue/worker-deps.js';
import { checkBackfill } from '../../sync/parallel-backfill.js';

/**
 * Judges a parallel backfill once its range jobs are done: finishes it (the watermark moves to
 * its head) or enqueues one repair walk per unproven gap, followed by the next check.
 */
export const backfillCheck: JobProcessor = async (job, deps) => {
  const { stream, backfillId, round } = parseJobPayload('backfill-check', job.data);
  const outcome = await checkBackfill({
    store: deps.backfillStore,
    syncStore: deps.syncStore,
    spec: stream,
    backfillId,
    round,
    leaseMs: deps.leaseMs,
    logger: deps.logger,
  });
  if (outcome.status === 'repair') {
    await enqueueBackfillRound(deps, { stream, backfillId, round: round + 1, tasks: outcome.tasks });
    return { status: 'repair', gaps: outcome.gaps.length };
  }
  if (outcome.status === 'failed') return { status: 'failed', gaps: outcome.gaps.length };
  // The backfill is proven: the read-side indexes it deferred are built now.
  const indexes = await deps.indexes?.restore({ whenIdle: true });
  return indexes && indexes.length > 0 ? { ...outcome, indexesBuilt: indexes.length } : outcome;
};
