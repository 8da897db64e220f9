#!/usr/bin/env node
import { main } from './main.js';
import { failureLine } from './run-outcome.js';

const controller = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => controller.abort(new Error(signal)));
}

main(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  signal: controller.signal,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ledger-indexer: ${failureLine(error)}\n`);
    process.exitCode = 1;
  },
);
