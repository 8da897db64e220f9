import { enqueueBackfillRound, keyRangeWidth } from '../../../queue/backfill-flow.js';
import { parseJobPayload } from '../../../queue/jobs.js';
import type { JobProcessor } from '../../../queue/worker-deps.js';
import { keyRepairTasks } from '../../../sync/backfill/key-backfill.js';
import { pageRepairTasks } from '../../../sync/backfill/page-range.js';
import { checkBackfill } from '../../../sync/backfill/run-check.js';

/**
 * Judges a parallel backfill once its range jobs are done: finishes it (the watermark moves to
 * its head) or enqueues one repair walk per unproven gap, followed by the next check.
 */
export const backfillCheck: JobProcessor = async (job, deps) => {
  const { stream, backfillId, round } = parseJobPayload('backfill-check', job.data);
  // Gaps are walked again in the dialect the service speaks now: by key, each from just below it.
  const byKey = (await deps.listDialect()) === 'key';
  const outcome = await checkBackfill({
    store: deps.backfillStore,
    syncStore: deps.syncStore,
    spec: stream,
    backfillId,
    round,
    leaseMs: deps.leaseMs,
    settleMs: deps.settleMs,
    logger: deps.logger,
  });
  if (outcome.status === 'repair') {
    const tasks = byKey
      ? keyRepairTasks(outcome.gaps, keyRangeWidth(deps))
      : await pageRepairTasks(deps.backfillStore, outcome);
    await enqueueBackfillRound(deps, { stream, backfillId, round: round + 1, tasks });
    return { status: 'repair', gaps: outcome.gaps.length };
  }
  if (outcome.status === 'failed') return { status: 'failed', gaps: outcome.gaps.length };
  // The backfill is proven: the read-side indexes it deferred are built now.
  const indexes = await deps.indexes?.restore({ whenIdle: true });
  return indexes && indexes.length > 0 ? { ...outcome, indexesBuilt: indexes.length } : outcome;
};
