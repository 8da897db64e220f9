import { main } from './main.js';
import { failureLine } from './run-outcome.js';

/**
 * After the first SIGINT/SIGTERM a command gets this long to stop cleanly (commit, release its
 * leases, close its connections); then the process exits anyway. A second signal exits at once.
 * Nothing is lost either way: checkpoints are committed with their pages, jobs run again.
 */
const STOP_DEADLINE_MS = 10_000;

/**
 * Runs the `ledger-indexer` command line with `argv` as a process: SIGINT/SIGTERM abort the
 * command (a second one, or one not obeyed within {@link STOP_DEADLINE_MS}, exits at once), the
 * exit code is set from its outcome, and output whose reader has closed is dropped.
 */
export function runProcess(argv: string[]): void {
  // A reader that went away (`ledger-indexer demo | head`) does not stop the work or change the
  // exit code: what is left to print is dropped, as `head`'s user asked.
  for (const out of [process.stdout, process.stderr]) {
    out.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      const code = signal === 'SIGTERM' ? 143 : 130;
      if (controller.signal.aborted) {
        process.stderr.write(`ledger-indexer: ${signal} again, exiting now\n`);
        process.exit(code);
      }
      controller.abort(new Error(signal));
      setTimeout(() => {
        process.stderr.write(
          `ledger-indexer: still stopping ${STOP_DEADLINE_MS / 1000} s after ${signal}, exiting now\n`,
        );
        process.exit(code);
      }, STOP_DEADLINE_MS).unref();
    });
  }

  main(argv, {
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
}
