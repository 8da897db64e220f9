import { DrizzleQueryError } from 'drizzle-orm/errors';
import { type Logger, pino } from 'pino';
import { redactUrl } from './config.js';
import { DatabaseError } from './errors.js';

export type { Logger } from 'pino';

/** Keys whose value is a URL that may carry a password: logged with the password masked. */
const URL_KEYS = [
  'url',
  'database_url',
  'redis_url',
  'base_url',
  'nats_url',
  'databaseUrl',
  'redisUrl',
  'baseUrl',
  'natsUrl',
];

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
  'httpToken',
  '*.httpToken',
  'webhookSecret',
  '*.webhookSecret',
  'secret',
  '*.secret',
  'natsToken',
  '*.natsToken',
  'command.args',
  '*.command.args',
  'err.command',
  'error.command',
];

/**
 * Creates the process logger: pino, JSON to stderr (stdout stays free for command output),
 * snake_case keys by convention. Secrets are redacted twice over: known secret-bearing keys
 * are censored, URL-valued keys have their password replaced, and errors are serialized
 * without the Redis command they carry (its arguments hold the password) and without a
 * statement's text or parameters (see {@link serializeError}).
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
      serializers: { err: serializeLogError, error: serializeLogError },
    },
    pino.destination({ fd: options.destination ?? 2, sync: true }),
  );
}

/** What logs show of an error: {@link serializeError}, minus the `command` of Redis client errors. */
function serializeLogError(value: unknown): unknown {
  return withoutCommands(serializeError(value), 0);
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

/**
 * pino's serializer of `err`, except for database failures: a {@link DatabaseError} is logged as
 * its fields (SQLSTATE, operation, kind) without its cause, and Drizzle's "Failed query" error,
 * which holds the statement's text and every parameter (whole pages of records), is logged as
 * its driver error's code alone. Other errors are serialised as pino does, unless their cause
 * chain leads to one of those two: then each link is serialised the same way.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  if (error instanceof DatabaseError) {
    return {
      type: error.name,
      message: error.message,
      kind: error.kind,
      sqlstate: error.sqlstate,
      network_code: error.networkCode,
      operation: error.operation,
      constraint: error.constraint,
      retryable: error.retryable,
      stack: error.stack,
    };
  }
  if (error instanceof DrizzleQueryError) {
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    return {
      type: 'DrizzleQueryError',
      message: 'failed query (statement and parameters omitted)',
      code: typeof code === 'string' ? code : undefined,
    };
  }
  if (!leadsToStatement(error)) return pino.stdSerializers.err(error);
  return {
    type: error.name,
    message: error.message,
    stack: error.stack,
    cause: serializeError(error.cause),
    ...(error instanceof AggregateError ? { errors: error.errors.map(serializeError) } : {}),
  };
}

function leadsToStatement(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 8) return false;
  if (error instanceof DatabaseError || error instanceof DrizzleQueryError) return true;
  if (error instanceof AggregateError && error.errors.some((e) => leadsToStatement(e, depth + 1)))
    return true;
  return leadsToStatement(error.cause, depth + 1);
}
