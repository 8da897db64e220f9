import { type Logger, pino } from 'pino';
import { redactUrl } from './config.js';

export type { Logger } from 'pino';

/** Keys whose value is a URL that may carry a password: logged with the password masked. */
const URL_KEYS = ['url', 'database_url', 'redis_url', 'base_url', 'databaseUrl', 'redisUrl', 'baseUrl'];

/**
 * Paths censored in every log line. `command` is what ioredis attaches to an error: the command
 * and its arguments, which for HELLO and AUTH hold the Redis password.
 */
const SECRET_PATHS = [
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'command.args',
  '*.command.args',
  'err.command',
  'error.command',
];

/**
 * Creates the process logger: pino, JSON to stderr (stdout stays free for command output),
 * snake_case keys by convention. Secrets are redacted twice over: known secret-bearing keys
 * are censored, URL-valued keys have their password replaced, and errors are serialized
 * without the Redis command they carry.
 */
export function createLogger(options: { level?: string; name?: string; destination?: number } = {}): Logger {
  return pino(
    {
      name: options.name ?? 'ledger-indexer',
      level: options.level ?? 'info',
      base: { pid: process.pid },
      redact: {
        paths: [...SECRET_PATHS, ...URL_KEYS, ...URL_KEYS.map((key) => `*.${key}`)],
        censor: (value, path) =>
          URL_KEYS.includes(path[path.length - 1] ?? '') && value !== undefined && value !== null
            ? redactUrl(String(value))
            : '***',
      },
      serializers: { err: serializeError, error: serializeError },
    },
    pino.destination({ fd: options.destination ?? 2, sync: true }),
  );
}

/** pino's error serializer, minus the `command` (with its arguments) of Redis client errors. */
export function serializeError(value: unknown): unknown {
  return withoutCommands(pino.stdSerializers.err(value as Error), 0);
}

function withoutCommands(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > 5) return value;
  const record = value as Record<string, unknown>;
  if ('command' in record) delete record['command'];
  for (const key of Object.keys(record)) {
    if (key !== 'raw') withoutCommands(record[key], depth + 1);
  }
  return value;
}

/** A logger that writes nothing: for tests and library callers that bring no logger. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
