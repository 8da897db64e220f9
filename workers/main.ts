#!/usr/bin/env node
/**
 * The worker process entry point: `node dist/cli/worker.js [flags]` (its bundle) runs what
 * `ledger-indexer worker [flags]` runs, for images and process managers that start a script.
 * The runtime is src/app/worker/run-worker.ts and the job processors are src/app/worker/jobs/.
 */
import { runProcess } from '../src/cli/process.js';

runProcess(['worker', ...process.argv.slice(2)]);
