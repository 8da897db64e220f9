import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../errors.js';

/** What every command module under `src/cli/commands/` exports. */
export interface Command {
  // The one-line summary lives in main.ts's command table only: `--help` lists every command
  // without loading their modules.
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
 * {@link UsageError} whose one-line message names it. A value that starts with a dash
 * (`--every -5s`) is taken as the value of a string option, so the option's own check can say
 * what is wrong with it, unless it is another option of the command (then the value is missing).
 */
export function parseFlags<T extends Options>(
  argv: string[],
  options: T,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: false; strict: true }>> {
  const args = joinDashValues(argv, options);
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(message ?? 'bad arguments');
  }
}

/** `--name -value` as `--name=-value` for string options; a missing value named plainly. */
function joinDashValues(argv: readonly string[], options: Options): string[] {
  const isOption = (arg: string): boolean => {
    if (arg.startsWith('--')) return (arg.slice(2).split('=')[0] as string) in options;
    return Object.values(options).some((option) => option.short !== undefined && arg === `-${option.short}`);
  };
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (name === undefined || options[name]?.type !== 'string') {
      args.push(arg);
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined || isOption(next)) throw new UsageError(`${arg} needs a value`);
    if (next.startsWith('-')) {
      args.push(`${arg}=${next}`);
      i++;
    } else {
      args.push(arg);
    }
  }
  return args;
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
