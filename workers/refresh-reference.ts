import { jobFailure } from '../src/queue/job-errors.js';
import { parseJobPayload } from '../src/queue/jobs.js';
import type { JobProcessor } from '../src/queue/worker-deps.js';

/** Refreshes the tokens (`/info`) and fees (`/fees`) kept in the database. */
export const refreshReference: JobProcessor = async (job, deps) => {
  parseJobPayload('refresh-reference', job.data);
  try {
    return await deps.refreshReference();
  } catch (error) {
    throw jobFailure(error);
  }
};
