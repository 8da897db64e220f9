import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../errors.js';

/** What every command module under `src/cli/commands/` exports. */
export interface Command {
  /** One line for the command list. */
  summary: string;
  /** The full `--help` text. */
  usage: string;
  /** Runs the command; resolves to the process exit code. */
  run(argv: string[], io: CommandIo): Promise<number>;
}

/** The process edges a command may touch, passed in so tests can run commands in-process. */
export interface CommandIo {
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `util.parseArgs` with the project's error convention: an unknown or malformed flag becomes a
 * {@link UsageError} whose one-line message names it.
 */
export function parseFlags<T extends Options>(
  argv: string[],
  options: T,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: false; strict: true }>> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(message ?? 'bad arguments');
  }
}

/**
 * Parses a whole-number flag value, naming the flag when it is not a whole number from `min`
 * to `max`. Every numeric flag has a maximum, so a typo cannot ask for a billion of something.
 */
export function intFlag(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got '${value}')`);
  }
  return Number(value);
}
