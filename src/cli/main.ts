import { ConfigError, UsageError } from '../errors.js';
import type { Command, CommandIo } from './command.js';

/**
 * Every command: its one-line summary, and its module, loaded only when run so start-up and
 * `--help` stay fast.
 */
const COMMANDS: Record<string, { summary: string; load: () => Promise<{ command: Command }> }> = {
  sync: {
    summary: 'one-shot sync of the service into the database',
    load: () => import('./commands/sync.js'),
  },
  status: {
    summary: 'per-stream sync state, lag to the service and the non-final backlog',
    load: () => import('./commands/status.js'),
  },
  demo: {
    summary: 'simulator + embedded database + a real sync + a report',
    load: () => import('./commands/demo.js'),
  },
  migrate: {
    summary: 'apply database migrations (safe when several processes start at once)',
    load: () => import('./commands/migrate.js'),
  },
  worker: { summary: 'run the BullMQ workers until SIGTERM', load: () => import('./commands/worker.js') },
  schedule: {
    summary: 'register the periodic sync jobs (idempotent)',
    load: () => import('./commands/schedule.js'),
  },
  serve: {
    summary: 'serve /health, /ready, /status and /metrics from the database (with sync from cron)',
    load: () => import('./commands/serve.js'),
  },
  verify: {
    summary: 'completeness report against the service; --against compares with another copy',
    load: () => import('./commands/verify.js'),
  },
  'dead-letters': {
    summary: "the change feed's undelivered batches; --replay delivers them again",
    load: () => import('./commands/dead-letters.js'),
  },
  digest: {
    summary: 'a hash of the stored records per rawId range, to compare two copies',
    load: () => import('./commands/digest.js'),
  },
  simulate: {
    summary: 'run the reference ledger server (simulator)',
    load: () => import('./commands/simulate.js'),
  },
};

function helpText(): string {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((n) => n.length), 4);
  return [
    'ledger-indexer: mirrors a token payment ledger into PostgreSQL',
    '',
    'Usage: ledger-indexer <command> [options]',
    '',
    'Commands:',
    ...names.map((name) => `  ${name.padEnd(width)}  ${COMMANDS[name]?.summary ?? ''}`),
    '',
    "Run 'ledger-indexer <command> --help' for a command's options.",
  ].join('\n');
}

/** Runs the command line `argv` (without `node` and the script); resolves to the exit code. */
export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${helpText()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    const { readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { packageRoot } = await import('../paths.js');
    const pkg = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
    io.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    io.stderr.write(`ledger-indexer: unknown command '${name}' (see --help)\n`);
    return 2;
  }
  const { command } = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${command.usage.trimEnd()}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError) {
      io.stderr.write(`ledger-indexer ${name}: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
