import { parseJobPayload } from '../../../queue/jobs.js';
import type { JobProcessor } from '../../../queue/worker-deps.js';

/** Refreshes the tokens (`/info`) and fees (`/fees`) kept in the database. */
export const refreshReference: JobProcessor = async (job, deps) => {
  parseJobPayload('refresh-reference', job.data);
  return await deps.refreshReference();
};
