import { type Logger, pino } from 'pino';
import { redactUrl } from './config.js';

export type { Logger } from 'pino';

/**
 * Creates the process logger: pino, JSON to stderr (stdout stays free for command output),
 * snake_case keys by convention. Secrets are redacted twice over: known secret-bearing keys
 * are censored, and URL-valued keys have their password replaced.
 */
export function createLogger(options: { level?: string; name?: string; destination?: number } = {}): Logger {
  return pino(
    {
      name: options.name ?? 'ledger-indexer',
      level: options.level ?? 'info',
      base: { pid: process.pid },
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
