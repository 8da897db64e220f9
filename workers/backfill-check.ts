import { enqueueBackfillRound } from '../src/queue/backfill-flow.js';
import { jobFailure } from '../src/queue/job-errors.js';
import { parseJobPayload } from '../src/queue/jobs.js';
import type { JobProcessor } from '../src/queue/worker-deps.js';
import { checkBackfill } from '../src/sync/parallel-backfill.js';

/**
 * Judges a parallel backfill once its range jobs are done: finishes it (the watermark moves to
 * its head) or enqueues one repair walk per unproven gap, followed by the next check.
 */
export const backfillCheck: JobProcessor = async (job, deps) => {
  const { stream, backfillId, round } = parseJobPayload('backfill-check', job.data);
  try {
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
    return outcome.status === 'done' ? outcome : { status: 'failed', gaps: outcome.gaps.length };
  } catch (error) {
    // A held lease is retried with backoff: the watermark must still move once it is free.
    throw jobFailure(error);
  }
};
