import { DrizzleQueryError } from 'drizzle-orm/errors';
import { type Logger, pino } from 'pino';
import { redactUrl } from './config.js';
import { DatabaseError } from './errors.js';

export type { Logger } from 'pino';

/**
 * Creates the process logger: pino, JSON to stderr (stdout stays free for command output),
 * snake_case keys by convention. Secrets are redacted twice over: known secret-bearing keys
 * are censored, and URL-valued keys have their password replaced. A logged `err` never carries
 * a statement's text or parameters (see {@link serializeError}).
 */
export function createLogger(options: { level?: string; name?: string; destination?: number } = {}): Logger {
  return pino(
    {
      name: options.name ?? 'ledger-indexer',
      level: options.level ?? 'info',
      base: { pid: process.pid },
      serializers: { err: serializeError },
      redact: {
        paths: ['password', '*.password', 'authorization', '*.authorization', 'headers.authorization'],
        censor: '***',
      },
      formatters: {
        log(object) {
          for (const key of ['database_url', 'redis_url', 'url', 'base_url']) {
            const value = object[key];
            if (typeof value === 'string') object[key] = redactUrl(value);
          }
          return object;
        },
      },
    },
    pino.destination({ fd: options.destination ?? 2, sync: true }),
  );
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
