import { ConfigError } from './errors.js';

/**
 * Every setting of ledger-indexer, parsed and validated once by {@link loadConfig}. This module
 * is the only reader of `process.env`; everything else is handed a `Config`.
 */
export interface Config {
  /** `LEDGER_BASE_URL`: the ledger service's base address. No default; commands that talk to the service need it. */
  ledgerBaseUrl: string | undefined;
  /** `LEDGER_PATHS`: JSON object overriding endpoint path templates, e.g. `{"txsByHash":"/tx/{ledgerHash}"}`. Default: the interface document's spelling. */
  ledgerPaths: Record<string, string>;
  /** `DATABASE_URL`: PostgreSQL connection string. Absent: the embedded PostgreSQL (PGlite) in {@link dataDir}. */
  databaseUrl: string | undefined;
  /** `LEDGER_INDEXER_DATA_DIR`: folder of the embedded database. Default `./.ledger-indexer`. */
  dataDir: string;
  /** `REDIS_URL`: Redis for BullMQ. Needed by `worker` and `schedule`. */
  redisUrl: string | undefined;
  /** `LOG_LEVEL`: pino level. Default `info`. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `LEDGER_REQUEST_TIMEOUT_MS`: total deadline of one request attempt, body included. Default 10000. */
  requestTimeoutMs: number;
  /**
   * `LEDGER_RETRIES`: retries of a transient request failure after the first try, whatever its
   * kind (network, timeout, 5xx, 429, malformed, truncated or too large body). Default 5.
   */
  retries: number;
  /** `LEDGER_RETRY_MIN_MS`: first backoff delay. Default 200. */
  retryMinMs: number;
  /** `LEDGER_RETRY_MAX_MS`: largest backoff delay. Default 10000. */
  retryMaxMs: number;
  /** `LEDGER_RETRY_AFTER_CAP_MS`: longest `Retry-After` honoured. Default 60000. */
  retryAfterCapMs: number;
  /** `LEDGER_REQUESTS_PER_SECOND`: client-side request budget shared by all calls of one client; 0 = unlimited. Default 50. */
  requestsPerSecond: number;
  /** `LEDGER_CONCURRENCY`: pages fetched at once by one process. Default 8. */
  concurrency: number;
  /** `LEDGER_MAX_BODY_BYTES`: largest response body accepted; a longer one is cut off and retried. Default 8388608 (8 MiB). */
  maxBodyBytes: number;
  /**
   * `LEDGER_HEDGE_AFTER`: a list page whose answer takes longer than this multiple of the recent
   * median is requested a second time (first answer wins); 0 = off, else at least 1. Default 3.
   */
  hedgeAfter: number;
  /** `LEDGER_HEDGE_MIN_MS`: the shortest wait before a page is requested a second time. Default 500. */
  hedgeMinMs: number;
}

/** Names of the environment variables, for messages and docs. */
export const ENV = {
  ledgerBaseUrl: 'LEDGER_BASE_URL',
  ledgerPaths: 'LEDGER_PATHS',
  databaseUrl: 'DATABASE_URL',
  dataDir: 'LEDGER_INDEXER_DATA_DIR',
  redisUrl: 'REDIS_URL',
  logLevel: 'LOG_LEVEL',
  requestTimeoutMs: 'LEDGER_REQUEST_TIMEOUT_MS',
  retries: 'LEDGER_RETRIES',
  retryMinMs: 'LEDGER_RETRY_MIN_MS',
  retryMaxMs: 'LEDGER_RETRY_MAX_MS',
  retryAfterCapMs: 'LEDGER_RETRY_AFTER_CAP_MS',
  requestsPerSecond: 'LEDGER_REQUESTS_PER_SECOND',
  concurrency: 'LEDGER_CONCURRENCY',
  maxBodyBytes: 'LEDGER_MAX_BODY_BYTES',
  hedgeAfter: 'LEDGER_HEDGE_AFTER',
  hedgeMinMs: 'LEDGER_HEDGE_MIN_MS',
} as const satisfies Record<keyof Config, string>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Parses and validates the configuration from `env`, with `overrides` (from command-line flags)
 * taking precedence. Throws {@link ConfigError} naming the first bad setting.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof Config, string | undefined>> = {},
): Config {
  const raw = (key: keyof Config): string | undefined => {
    const value = overrides[key] ?? env[ENV[key]];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const name = (key: keyof Config): string => (overrides[key] !== undefined ? flagName(key) : ENV[key]);

  const int = (key: keyof Config, fallback: number, min: number): number => {
    const value = raw(key);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
      throw new ConfigError(name(key), `must be a whole number >= ${min} (got '${value}')`);
    }
    return Number(value);
  };
  const multiple = (key: keyof Config, fallback: number): number => {
    const value = raw(key);
    if (value === undefined) return fallback;
    const parsed = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
    if (!(parsed === 0 || (parsed >= 1 && Number.isFinite(parsed)))) {
      throw new ConfigError(name(key), `must be 0 (off) or a number >= 1 (got '${value}')`);
    }
    return parsed;
  };
  const url = (key: keyof Config, protocols: readonly string[]): string | undefined => {
    const value = raw(key);
    if (value === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(name(key), `is not a valid URL`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(name(key), `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
    }
    return value;
  };

  const logLevel = raw('logLevel') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(name('logLevel'), `must be one of ${LOG_LEVELS.join(', ')} (got '${logLevel}')`);
  }

  const retryMinMs = int('retryMinMs', 200, 0);
  const retryMaxMs = int('retryMaxMs', 10_000, 0);
  if (retryMaxMs < retryMinMs) {
    throw new ConfigError(name('retryMaxMs'), `must be >= ${ENV.retryMinMs} (${retryMinMs})`);
  }

  return {
    ledgerBaseUrl: url('ledgerBaseUrl', ['http:', 'https:']),
    ledgerPaths: parsePaths(raw('ledgerPaths'), name('ledgerPaths')),
    databaseUrl: url('databaseUrl', ['postgres:', 'postgresql:']),
    dataDir: raw('dataDir') ?? './.ledger-indexer',
    redisUrl: url('redisUrl', ['redis:', 'rediss:']),
    logLevel: logLevel as Config['logLevel'],
    requestTimeoutMs: int('requestTimeoutMs', 10_000, 1),
    retries: int('retries', 5, 0),
    retryMinMs,
    retryMaxMs,
    retryAfterCapMs: int('retryAfterCapMs', 60_000, 0),
    requestsPerSecond: int('requestsPerSecond', 50, 0),
    concurrency: int('concurrency', 8, 1),
    maxBodyBytes: int('maxBodyBytes', 8 * 1024 * 1024, 1),
    hedgeAfter: multiple('hedgeAfter', 3),
    hedgeMinMs: int('hedgeMinMs', 500, 0),
  };
}

/** The command-line flag that overrides a setting, e.g. `--base-url` for `ledgerBaseUrl`. */
export function flagName(key: keyof Config): string {
  if (key === 'ledgerBaseUrl') return '--base-url';
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function parsePaths(value: string | undefined, setting: string): Record<string, string> {
  if (value === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError(setting, 'must be a JSON object of endpoint name to path template');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(setting, 'must be a JSON object of endpoint name to path template');
  }
  const paths: Record<string, string> = {};
  for (const [key, template] of Object.entries(parsed)) {
    if (typeof template !== 'string' || !template.startsWith('/')) {
      throw new ConfigError(setting, `path of '${key}' must be a string starting with '/'`);
    }
    paths[key] = template;
  }
  return paths;
}

/** Replaces the password of a URL with `***`, for logs and messages. */
export function redactUrl(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return value.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
  }
}
