import type { JobName } from '../../../queue/jobs.js';
import type { JobProcessor } from '../../../queue/worker-deps.js';
import { backfillCheck } from './backfill-check.js';
import { backfillRange } from './backfill-range.js';
import { refreshReference } from './refresh-reference.js';
import { reread } from './reread.js';
import { syncStream } from './sync-stream.js';

/** The processor of every job, by job name. */
export const PROCESSORS: Record<JobName, JobProcessor> = {
  'sync-stream': syncStream,
  'backfill-range': backfillRange,
  'backfill-check': backfillCheck,
  // The re-read job keeps its BullMQ name, which schedules stored in Redis and PostgreSQL use.
  reconcile: reread,
  'refresh-reference': refreshReference,
};
