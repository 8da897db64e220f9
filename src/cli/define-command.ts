import type { ParseArgsConfig } from 'node:util';
import { type Config, loadConfig, unknownSettings } from '../config.js';
import { ConfigError, UsageError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { type Command, type CommandIo, parseFlags } from './command.js';
import { failureLine, signalExitCode, stoppedLine } from './run-outcome.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The parsed flags of a command declaring `T`. */
export type FlagValues<T extends Options> = ReturnType<typeof parseFlags<T>>['values'];

/** What a command's `run` gets: its flags, the process edges, and the shared set-up. */
export interface CommandContext<T extends Options> {
  values: FlagValues<T>;
  io: CommandIo;
  /** The configuration from `io.env`, loaded on the first call (with that call's overrides). */
  config(overrides?: Partial<Record<keyof Config, string | undefined>>): Config;
  /** The logger, created on the first call at `level` (default: the configured level) and `name`. */
  logger(level?: string, name?: string): Logger;
  /** Registers a resource to close when the command ends, however it ends; last in, first closed. */
  onClose(close: () => unknown): void;
}

/** A command declared by its name, help, flags and body; {@link defineCommand} does the rest. */
export interface CommandSpec<T extends Options> {
  /** The command's name, as it prefixes its error lines: `ledger-indexer <name>: …`. */
  name: string;
  usage: string;
  flags: T;
  /** The command's work; resolves to the exit code. */
  run(ctx: CommandContext<T>): Promise<number>;
  /**
   * How an error thrown by `run` ends the command (one stderr line, the exit code). Default:
   * {@link commandFailure}. A {@link ConfigError} or {@link UsageError} never gets here: main
   * turns it into exit 2.
   */
  fail?(error: unknown, ctx: CommandContext<T>): number | Promise<number>;
}

/**
 * The default end of a failed command: `stopped by SIGINT/SIGTERM` and 130/143 when a signal
 * stopped it, else the error's {@link failureLine} and 1.
 */
export function commandFailure(name: string, error: unknown, io: CommandIo): number {
  if (io.signal.aborted) {
    io.stderr.write(`ledger-indexer ${name}: ${stoppedLine(io.signal)}\n`);
    return signalExitCode(io.signal);
  }
  io.stderr.write(`ledger-indexer ${name}: ${failureLine(error)}\n`);
  return 1;
}

/**
 * A {@link Command} from its spec: parses the flags, gives `run` a lazily loaded configuration
 * and logger, turns a thrown error into one stderr line and an exit code, and closes every
 * registered resource at the end.
 */
export function defineCommand<T extends Options>(spec: CommandSpec<T>): Command {
  return {
    usage: spec.usage,
    async run(argv, io) {
      const { values } = parseFlags(argv, spec.flags);
      const closers: Array<() => unknown> = [];
      let config: Config | undefined;
      let logger: Logger | undefined;
      const ctx: CommandContext<T> = {
        values,
        io,
        config(overrides) {
          if (config === undefined) {
            // Before a bad setting ends the command: the two may be one typo.
            for (const line of unknownSettings(io.env))
              io.stderr.write(`ledger-indexer ${spec.name}: ${line}\n`);
            config = loadConfig(io.env, overrides);
          }
          return config;
        },
        logger(level, name) {
          logger ??= createLogger({ level: level ?? ctx.config().logLevel, name });
          return logger;
        },
        onClose(close) {
          closers.push(close);
        },
      };
      try {
        return await spec.run(ctx);
      } catch (error) {
        if (error instanceof ConfigError || error instanceof UsageError) throw error;
        return spec.fail ? await spec.fail(error, ctx) : commandFailure(spec.name, error, io);
      } finally {
        for (const close of closers.reverse()) await close();
      }
    },
  };
}
