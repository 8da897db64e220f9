import { KEY_COUNT, REQUEST_DEFAULTS, REREAD_DEFAULTS, SETTLE_MS } from './defaults.js';
import { ConfigError } from './errors.js';
import { type NatsSettings, parseNatsSettings } from './nats-settings.js';
import { parseSinkSettings, type SinkSettings } from './sink-settings.js';

/**
 * Every setting of ledger-indexer, parsed and validated once by {@link loadConfig}. This module
 * is the only reader of `process.env`; everything else is handed a `Config`. The NATS
 * destination's settings are described in src/nats-settings.ts, the webhook's and the other
 * sinks' in src/sink-settings.ts.
 */
export interface Config extends NatsSettings, SinkSettings {
  /** `LEDGER_BASE_URL`: the ledger service's base address. No default; commands that talk to the service need it. */
  ledgerBaseUrl: string | undefined;
  /**
   * `LEDGER_LIST_URL`: base address of the transaction lists and the single-record look-ups (a
   * deployment serves them from a second host, its explorer API); `/info`, balances, fees and
   * `POST /tx` stay on `LEDGER_BASE_URL`. Default (undefined): `LEDGER_BASE_URL`.
   */
  ledgerListUrl: string | undefined;
  /** `LEDGER_PATHS`: JSON object overriding endpoint path templates, e.g. `{"txsByHash":"/tx/{ledgerHash}"}`; applied over `LEDGER_LOOKUPS`. Default: the service's own paths (`/txs`, `/txsByHash/{ledgerHash}`, …). */
  ledgerPaths: Record<string, string>;
  /**
   * `LEDGER_PAGING`: how lists are read: `key` (`/txs?cursor=<rawId>&order=…&count=…`, the
   * deployed dialect), `page` (page numbers, the interface document's), or `auto` (one request
   * asks the service which it speaks). Default `auto`.
   */
  ledgerPaging: PagingMode;
  /** `LEDGER_PAGE_COUNT`: records asked per key-paging request, 10 to 1000; lowered at run time when the service refuses it. Default 100. */
  ledgerPageCount: number;
  /**
   * `LEDGER_ACCOUNT_LISTS`: how a key-paging account list is asked: `address`
   * (`/txs?address=<account>`), `path` (`/txs/{account}`), or `auto` (`address` first, the path
   * form after a 404, the one that answers kept). Default `auto`.
   */
  ledgerAccountLists: AccountListForm;
  /**
   * `LEDGER_LOOKUPS`: spelling of the single-record look-ups: `interface`
   * (`/txsByHash/{ledgerHash}`, `/mintedTxByChainTxHash/{chainTxHash}`) or `deployed`
   * (`/tx/{ledgerHash}`, `/minted/{chainTxHash}`); `LEDGER_PATHS` still overrides either path.
   * Default `interface`.
   */
  ledgerLookups: LookupSpelling;
  /** `DATABASE_URL`: PostgreSQL connection string. Absent: the embedded PostgreSQL (PGlite) in {@link dataDir}. */
  databaseUrl: string | undefined;
  /**
   * `LEDGER_READ_DATABASE_URL`: a PostgreSQL connection string for what the HTTP surface serves
   * from the mirror (the read API and the change feed's reads), meant for a role that may only
   * read (docs/operating.md, "A role that may only read"). Needs `DATABASE_URL`. Default: `DATABASE_URL`.
   */
  readDatabaseUrl: string | undefined;
  /** `LEDGER_INDEXER_DATA_DIR`: folder of the embedded database. Default `./.ledger-indexer`. */
  dataDir: string;
  /** `REDIS_URL`: Redis for BullMQ. Needed by `worker` and `schedule`. */
  redisUrl: string | undefined;
  /** `LOG_LEVEL`: pino level. Default `info`. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `LEDGER_REQUEST_TIMEOUT_MS`: total deadline of one request attempt, body included, 1 to 600000 (10 minutes). Default 10000. */
  requestTimeoutMs: number;
  /**
   * `LEDGER_RETRIES`: retries of a transient request failure after the first try, whatever its
   * kind (network, timeout, 5xx, 429, malformed, truncated or too large body), 0 to 100. Default 5.
   */
  retries: number;
  /** `LEDGER_RETRY_MIN_MS`: first backoff delay, 0 to 60000 (1 minute). Default 200. */
  retryMinMs: number;
  /** `LEDGER_RETRY_MAX_MS`: largest backoff delay, from `LEDGER_RETRY_MIN_MS` to 600000 (10 minutes). Default 10000. */
  retryMaxMs: number;
  /**
   * `LEDGER_MAX_RETRY_WAIT_MS`: the longest wait a `Retry-After` may ask for, 0 to 3600000 (1
   * hour); a longer one ends the run at once with one line naming the wait. Default 120000.
   */
  maxRetryWaitMs: number;
  /** `LEDGER_REQUESTS_PER_SECOND`: client-side request budget shared by all calls of one client, 0 to 100000; 0 = unlimited. Default 50. */
  requestsPerSecond: number;
  /**
   * `LEDGER_CONCURRENCY`: the most list requests one walk keeps in flight, 1 to 256. Below it,
   * the number follows the request budget × the measured answer time (10 or so at 200 ms and 50
   * a second), backed off on 429s and timeouts. Default 32.
   */
  concurrency: number;
  /**
   * `LEDGER_WRITERS`: batches of a stream walk written at once, each over its own PostgreSQL
   * connection, 1 to 16. Default 2 (the embedded database always writes one at a time).
   */
  writers: number;
  /** `LEDGER_MAX_BODY_BYTES`: largest response body accepted; a longer one is cut off and retried, 1 to 1073741824 (1 GiB). Default 8388608 (8 MiB). */
  maxBodyBytes: number;
  /**
   * `LEDGER_HEDGE_AFTER`: a list page whose answer takes longer than this multiple of the recent
   * median is requested a second time (first answer wins); 0 = off, else 1 to 100. Default 3.
   */
  hedgeAfter: number;
  /** `LEDGER_HEDGE_MIN_MS`: the shortest wait before a page is requested a second time, 0 to 600000. Default 500. */
  hedgeMinMs: number;
  /**
   * `LEDGER_RECHECK_AFTER_MS`: a record not final yet (not `packaged`, or a recent burn without its
   * target-chain hash) is read again by a run that begins more than this after its last read, 0
   * to 3600000. Default 2000.
   */
  recheckAfterMs: number;
  /**
   * `LEDGER_SETTLE_MS`: how long after a record with a higher rawId a record may still become
   * visible (a service whose writes commit out of order), 0 to 600000. Tails read again down to
   * the span last read at least this long after its head was seen. Default 3000.
   */
  settleMs: number;
  /**
   * `LEDGER_STRAGGLER_AGE_MS`: past this age since first sight, a record that reads keep finding
   * unchanged is read with a delay growing with its age (a quarter of it, at most an hour),
   * 0 to 86400000. Default 120000.
   */
  stragglerAgeMs: number;
  /**
   * `LEDGER_CHECK_SIGNATURES`: recover each EVM sender's `sig` to `from` as records are written
   * (`true`/`false`). It costs about a hundred times the hash check, so it is off by default;
   * the recomputed `ledgerHash` is always checked.
   */
  checkSignatures: boolean;
  /** `LEDGER_HTTP_HOST`: the address the HTTP surface (`/health`, `/ready`, `/status`, `/metrics`) binds. Default `127.0.0.1`. */
  httpHost: string;
  /**
   * `LEDGER_HTTP_PORT`: the HTTP surface's port, 0 to 65535; 0 = off. Unset: off on `worker`,
   * {@link DEFAULT_SERVE_PORT} on `serve`.
   */
  httpPort: number | undefined;
  /**
   * `LEDGER_HTTP_TOKEN`: the bearer token the mirror's read API (the service's query endpoints)
   * and the change feed (`/feed`) ask of every request (`Authorization: Bearer <token>`; 401
   * without it). 16 to 256 printable
   * characters. Unset: no token, and the surface refuses to bind an address that is not loopback.
   */
  httpToken: string | undefined;
  /**
   * `LEDGER_FEED_RETENTION`: how long the change feed keeps its events (`GET /feed`), a duration
   * like `7d`, `12h`, `30m` or `90s`, from 1 minute to 3650 days; a reader resuming from a position
   * older than this is answered 410. Default `7d`.
   */
  feedRetentionMs: number;
}

/** The default of `LEDGER_FEED_RETENTION`: seven days. */
export const DEFAULT_FEED_RETENTION_MS = 7 * 86_400_000;
/** The accepted range of `LEDGER_FEED_RETENTION` (a duration, not a number): 1 minute to 3650 days. */
export const FEED_RETENTION_LIMITS = { min: 60_000, max: 3650 * 86_400_000 } as const;

/** Values of `LEDGER_PAGING`. */
export const PAGING_MODES = ['auto', 'key', 'page'] as const;
export type PagingMode = (typeof PAGING_MODES)[number];
/** Values of `LEDGER_ACCOUNT_LISTS`. */
export const ACCOUNT_LIST_FORMS = ['auto', 'address', 'path'] as const;
export type AccountListForm = (typeof ACCOUNT_LIST_FORMS)[number];
/** Values of `LEDGER_LOOKUPS`. */
export const LOOKUP_SPELLINGS = ['interface', 'deployed'] as const;
export type LookupSpelling = (typeof LOOKUP_SPELLINGS)[number];

/** The port `serve` listens on when `LEDGER_HTTP_PORT` and `--http-port` are unset. */
export const DEFAULT_SERVE_PORT = 9464;

/** Names of the environment variables, for messages and docs. */
export const ENV = {
  ledgerBaseUrl: 'LEDGER_BASE_URL',
  ledgerListUrl: 'LEDGER_LIST_URL',
  ledgerPaths: 'LEDGER_PATHS',
  ledgerPaging: 'LEDGER_PAGING',
  ledgerPageCount: 'LEDGER_PAGE_COUNT',
  ledgerAccountLists: 'LEDGER_ACCOUNT_LISTS',
  ledgerLookups: 'LEDGER_LOOKUPS',
  databaseUrl: 'DATABASE_URL',
  readDatabaseUrl: 'LEDGER_READ_DATABASE_URL',
  dataDir: 'LEDGER_INDEXER_DATA_DIR',
  redisUrl: 'REDIS_URL',
  logLevel: 'LOG_LEVEL',
  requestTimeoutMs: 'LEDGER_REQUEST_TIMEOUT_MS',
  retries: 'LEDGER_RETRIES',
  retryMinMs: 'LEDGER_RETRY_MIN_MS',
  retryMaxMs: 'LEDGER_RETRY_MAX_MS',
  maxRetryWaitMs: 'LEDGER_MAX_RETRY_WAIT_MS',
  requestsPerSecond: 'LEDGER_REQUESTS_PER_SECOND',
  concurrency: 'LEDGER_CONCURRENCY',
  writers: 'LEDGER_WRITERS',
  maxBodyBytes: 'LEDGER_MAX_BODY_BYTES',
  hedgeAfter: 'LEDGER_HEDGE_AFTER',
  hedgeMinMs: 'LEDGER_HEDGE_MIN_MS',
  recheckAfterMs: 'LEDGER_RECHECK_AFTER_MS',
  settleMs: 'LEDGER_SETTLE_MS',
  stragglerAgeMs: 'LEDGER_STRAGGLER_AGE_MS',
  checkSignatures: 'LEDGER_CHECK_SIGNATURES',
  httpHost: 'LEDGER_HTTP_HOST',
  httpPort: 'LEDGER_HTTP_PORT',
  httpToken: 'LEDGER_HTTP_TOKEN',
  feedRetentionMs: 'LEDGER_FEED_RETENTION',
  natsUrl: 'LEDGER_NATS_URL',
  natsStream: 'LEDGER_NATS_STREAM',
  natsSubject: 'LEDGER_NATS_SUBJECT',
  natsDuplicateWindowMs: 'LEDGER_NATS_DUPLICATE_WINDOW',
  natsToken: 'LEDGER_NATS_TOKEN',
  webhookUrl: 'LEDGER_WEBHOOK_URL',
  webhookSecret: 'LEDGER_WEBHOOK_SECRET',
  webhookFilter: 'LEDGER_WEBHOOK_FILTER',
  webhookTimeoutMs: 'LEDGER_WEBHOOK_TIMEOUT_MS',
  sinkTries: 'LEDGER_SINK_TRIES',
  sinkRetryMinMs: 'LEDGER_SINK_RETRY_MIN_MS',
  sinkRetryMaxMs: 'LEDGER_SINK_RETRY_MAX_MS',
  sinkLeaseMs: 'LEDGER_SINK_LEASE_MS',
} as const satisfies Record<keyof Config, string>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The accepted range of each numeric setting. The maxima are far above any useful value and
 * catch typos (an extra zero or three) before they turn into a billion requests in flight or a
 * timeout of weeks.
 */
export const LIMITS = {
  ledgerPageCount: { min: 10, max: 1000 },
  requestTimeoutMs: { min: 1, max: 600_000 },
  retries: { min: 0, max: 100 },
  retryMinMs: { min: 0, max: 60_000 },
  retryMaxMs: { min: 0, max: 600_000 },
  maxRetryWaitMs: { min: 0, max: 3_600_000 },
  requestsPerSecond: { min: 0, max: 100_000 },
  concurrency: { min: 1, max: 256 },
  writers: { min: 1, max: 16 },
  maxBodyBytes: { min: 1, max: 1_073_741_824 },
  hedgeMinMs: { min: 0, max: 600_000 },
  recheckAfterMs: { min: 0, max: 3_600_000 },
  settleMs: { min: 0, max: 600_000 },
  stragglerAgeMs: { min: 0, max: 86_400_000 },
  httpPort: { min: 0, max: 65_535 },
} as const satisfies Partial<Record<keyof Config, { min: number; max: number }>>;

/** How each kind of setting is read: its raw value, its name in messages, and typed parsers that throw {@link ConfigError}. */
function settingReaders(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof Config, string | undefined>>,
) {
  const raw = (key: keyof Config): string | undefined => {
    const value = overrides[key] ?? env[ENV[key]];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const name = (key: keyof Config): string => (overrides[key] !== undefined ? flagName(key) : ENV[key]);

  const int = (key: keyof Config, fallback: number, range: { min: number; max: number }): number => {
    const value = raw(key);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < range.min || Number(value) > range.max) {
      throw new ConfigError(
        name(key),
        `must be a whole number from ${range.min} to ${range.max} (got '${value}')`,
      );
    }
    return Number(value);
  };
  const multiple = (key: keyof Config, fallback: number): number => {
    const value = raw(key);
    if (value === undefined) return fallback;
    const parsed = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
    if (!(parsed === 0 || (parsed >= 1 && parsed <= 100))) {
      throw new ConfigError(name(key), `must be 0 (off) or a number from 1 to 100 (got '${value}')`);
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

  const bool = (key: keyof Config, fallback: boolean): boolean => {
    const value = raw(key)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(value)) return true;
    if (['false', '0', 'no', 'off'].includes(value)) return false;
    throw new ConfigError(name(key), `must be true or false (got '${raw(key)}')`);
  };
  return { raw, name, int, multiple, url, bool };
}

/** Variables of ours that are no setting: read by `docker-compose.yml` itself (docs/configuration.md). */
const COMPOSE_VARIABLES: ReadonlySet<string> = new Set(['LEDGER_ACCOUNTS', 'LEDGER_INDEXER_TAG']);

/** Settings renamed: the old name, and the one to use. */
const RENAMED: Readonly<Record<string, string>> = { LEDGER_RETRY_AFTER_CAP_MS: ENV.maxRetryWaitMs };

/**
 * One line for each `LEDGER_…` variable in `env` that is no setting (a typo, an old name, a
 * setting given our prefix), naming the one meant when it is clear: otherwise it is ignored
 * without a word, and `LEDGER_DATABASE_URL` silently sends the mirror to the embedded database.
 */
export function unknownSettings(env: Record<string, string | undefined>): string[] {
  const known = new Set<string>(Object.values(ENV));
  return Object.keys(env)
    .filter((name) => name.startsWith('LEDGER_') && !known.has(name) && !COMPOSE_VARIABLES.has(name))
    .sort()
    .map((name) => {
      const meant = RENAMED[name] ?? closestSetting(name, known);
      return `${name} is not a setting and is ignored${meant === undefined ? '' : ` (did you mean ${meant}?)`}`;
    });
}

/** The setting `name` most likely stands for: the same without our prefix, else one or two letters apart. */
function closestSetting(name: string, known: ReadonlySet<string>): string | undefined {
  const bare = name.slice('LEDGER_'.length);
  if (known.has(bare)) return bare;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance <= 2 && (best === undefined || distance < best.distance))
      best = { name: candidate, distance };
  }
  return best?.name;
}

/** Levenshtein distance of two short strings. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Parses and validates the configuration from `env`, with `overrides` (from command-line flags)
 * taking precedence. Throws {@link ConfigError} naming the first bad setting.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof Config, string | undefined>> = {},
): Config {
  const { raw, name, int, multiple, url, bool } = settingReaders(env, overrides);

  const logLevel = raw('logLevel') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(name('logLevel'), `must be one of ${LOG_LEVELS.join(', ')} (got '${logLevel}')`);
  }

  const retryMinMs = int('retryMinMs', REQUEST_DEFAULTS.retryMinMs, LIMITS.retryMinMs);
  const retryMaxMs = int('retryMaxMs', REQUEST_DEFAULTS.retryMaxMs, LIMITS.retryMaxMs);
  if (retryMaxMs < retryMinMs) {
    throw new ConfigError(name('retryMaxMs'), `must be >= ${ENV.retryMinMs} (${retryMinMs})`);
  }

  const databaseUrl = url('databaseUrl', ['postgres:', 'postgresql:']);
  const readDatabaseUrl = url('readDatabaseUrl', ['postgres:', 'postgresql:']);
  if (readDatabaseUrl !== undefined && databaseUrl === undefined) {
    throw new ConfigError(
      name('readDatabaseUrl'),
      `needs ${ENV.databaseUrl}: the embedded database has no other roles`,
    );
  }

  return {
    ledgerBaseUrl: url('ledgerBaseUrl', ['http:', 'https:']),
    ledgerListUrl: url('ledgerListUrl', ['http:', 'https:']),
    ledgerPaths: parsePaths(raw('ledgerPaths'), name('ledgerPaths')),
    ledgerPaging: oneOf(raw('ledgerPaging'), name('ledgerPaging'), PAGING_MODES),
    ledgerPageCount: int('ledgerPageCount', KEY_COUNT, LIMITS.ledgerPageCount),
    ledgerAccountLists: oneOf(raw('ledgerAccountLists'), name('ledgerAccountLists'), ACCOUNT_LIST_FORMS),
    ledgerLookups: oneOf(raw('ledgerLookups'), name('ledgerLookups'), LOOKUP_SPELLINGS),
    databaseUrl,
    readDatabaseUrl,
    dataDir: raw('dataDir') ?? './.ledger-indexer',
    redisUrl: url('redisUrl', ['redis:', 'rediss:']),
    logLevel: logLevel as Config['logLevel'],
    requestTimeoutMs: int('requestTimeoutMs', REQUEST_DEFAULTS.timeoutMs, LIMITS.requestTimeoutMs),
    retries: int('retries', REQUEST_DEFAULTS.retries, LIMITS.retries),
    retryMinMs,
    retryMaxMs,
    maxRetryWaitMs: int('maxRetryWaitMs', REQUEST_DEFAULTS.maxRetryWaitMs, LIMITS.maxRetryWaitMs),
    requestsPerSecond: int('requestsPerSecond', REQUEST_DEFAULTS.requestsPerSecond, LIMITS.requestsPerSecond),
    concurrency: int('concurrency', 32, LIMITS.concurrency),
    writers: int('writers', 2, LIMITS.writers),
    maxBodyBytes: int('maxBodyBytes', REQUEST_DEFAULTS.maxBodyBytes, LIMITS.maxBodyBytes),
    hedgeAfter: multiple('hedgeAfter', REQUEST_DEFAULTS.hedgeAfter),
    hedgeMinMs: int('hedgeMinMs', REQUEST_DEFAULTS.hedgeMinMs, LIMITS.hedgeMinMs),
    recheckAfterMs: int('recheckAfterMs', REREAD_DEFAULTS.recheckAfterMs, LIMITS.recheckAfterMs),
    settleMs: int('settleMs', SETTLE_MS, LIMITS.settleMs),
    stragglerAgeMs: int('stragglerAgeMs', REREAD_DEFAULTS.stragglerAgeMs, LIMITS.stragglerAgeMs),
    checkSignatures: bool('checkSignatures', false),
    httpHost: parseHost(raw('httpHost'), name('httpHost')) ?? '127.0.0.1',
    httpPort: raw('httpPort') === undefined ? undefined : int('httpPort', 0, LIMITS.httpPort),
    httpToken: parseToken(raw('httpToken'), name('httpToken')),
    feedRetentionMs: parseDuration(raw('feedRetentionMs'), name('feedRetentionMs'), {
      fallback: DEFAULT_FEED_RETENTION_MS,
      range: FEED_RETENTION_LIMITS,
    }),
    ...parseNatsSettings(raw, name),
    ...parseSinkSettings({ raw, name, int, url }),
  };
}

/**
 * The longest account accepted where one is given (`--account` of `sync` and `schedule`, a job's
 * stream): far above any real one (an EVM address is 42 characters, an Arweave address 43, an
 * `eid…` id fewer), low enough that a stream's key stays printable.
 */
export const ACCOUNT_MAX_LENGTH = 128;

/**
 * Why `value` cannot be an account, or `null` when it can: it must be 1 to
 * {@link ACCOUNT_MAX_LENGTH} characters, none of them whitespace or control characters (an
 * account never holds one; a pasted newline or space would make a stream of its own, for good).
 */
export function accountProblem(value: string): string | null {
  const shown = `${JSON.stringify(value.slice(0, 24))}${value.length > 24 ? '…' : ''}`;
  if (value.length === 0) return 'must not be empty';
  if (value.length > ACCOUNT_MAX_LENGTH) {
    return `must be at most ${ACCOUNT_MAX_LENGTH} characters (got ${value.length}: ${shown})`;
  }
  if (/[\s\p{C}]/u.test(value)) return `must not contain spaces or control characters (got ${shown})`;
  return null;
}

/** The accounts given in `setting` (a repeated flag), each checked by {@link accountProblem}. */
export function parseAccounts(values: readonly string[] | undefined, setting: string): string[] {
  for (const value of values ?? []) {
    const problem = accountProblem(value);
    if (problem !== null) throw new ConfigError(setting, problem);
  }
  return [...(values ?? [])];
}

/** Flags whose name is not the setting's key in kebab case. */
const FLAG_NAMES: Partial<Record<keyof Config, string>> = {
  ledgerBaseUrl: '--base-url',
  ledgerListUrl: '--list-url',
  ledgerPaging: '--paging',
  ledgerPageCount: '--count',
};

/** The command-line flag that overrides a setting, e.g. `--base-url` for `ledgerBaseUrl`. */
export function flagName(key: keyof Config): string {
  const named = FLAG_NAMES[key];
  if (named !== undefined) return named;
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** One of `values` (the first when unset), in any case; otherwise a {@link ConfigError} naming `setting`. */
function oneOf<T extends string>(
  value: string | undefined,
  setting: string,
  values: readonly [T, ...T[]],
): T {
  if (value === undefined) return values[0];
  const found = values.find((v) => v === value.toLowerCase());
  if (found === undefined) {
    throw new ConfigError(setting, `must be one of ${values.join(', ')} (got '${value}')`);
  }
  return found;
}

const DURATION_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration written `<whole number><unit>`, unit `s`, `m`, `h` or `d` (`7d`), in ms, within `range`. */
function parseDuration(
  value: string | undefined,
  setting: string,
  input: { fallback: number; range: { min: number; max: number } },
): number {
  if (value === undefined) return input.fallback;
  const match = /^(\d{1,7})(s|m|h|d)$/.exec(value);
  const ms = match === null ? Number.NaN : Number(match[1]) * (DURATION_UNITS[match[2] ?? ''] ?? Number.NaN);
  if (!(ms >= input.range.min && ms <= input.range.max)) {
    throw new ConfigError(
      setting,
      `must be a duration from 1m to 3650d like 7d, 12h or 30m (got '${value}')`,
    );
  }
  return ms;
}

/** A host name or an address (`0.0.0.0`, `::`), never a URL: what `listen()` takes. */
function parseHost(value: string | undefined, setting: string): string | undefined {
  if (value !== undefined && !/^[A-Za-z0-9.:_-]+$/.test(value)) {
    throw new ConfigError(setting, `must be a host name or an IP address like 127.0.0.1 (got '${value}')`);
  }
  return value;
}

function parseToken(value: string | undefined, setting: string): string | undefined {
  if (value !== undefined && !/^[\x21-\x7e]{16,256}$/.test(value)) {
    throw new ConfigError(setting, 'must be 16 to 256 printable characters without spaces');
  }
  return value;
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
