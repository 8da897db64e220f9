/**
 * The settings of the change feed's NATS JetStream destination, parsed for `loadConfig`
 * (src/config.ts, the one reader of the environment, which names them in `ENV`): pure functions
 * of the values it hands over.
 */
import { ConfigError } from './errors.js';

/** The NATS destination's part of the configuration (`Config` extends it). */
export interface NatsSettings {
  /**
   * `LEDGER_NATS_URL`: the NATS server the change feed is published to with JetStream,
   * `nats://[user:password@]host[:port]` or `tls://…` (port 4222 when absent). Unset: no NATS
   * destination.
   */
  natsUrl: string | undefined;
  /** `LEDGER_NATS_STREAM`: the JetStream stream that keeps the feed's messages (created when missing). Default `LEDGER_FEED`. */
  natsStream: string;
  /** `LEDGER_NATS_SUBJECT`: the subject prefix; an event goes to `<prefix>.<action>.<tokenTag>.<kind>`. Default `ledger.feed`. */
  natsSubject: string;
  /**
   * `LEDGER_NATS_DUPLICATE_WINDOW`: the stream's duplicate window when the indexer creates it, a
   * duration from `1s` to `7d`: a message published again within it (a replay after a crash) is
   * stored once. Default `2m`.
   */
  natsDuplicateWindowMs: number;
  /** `LEDGER_NATS_TOKEN`: the token the NATS server asks for (its `authorization { token }`). Unset: none. */
  natsToken: string | undefined;
}

/** The default of `LEDGER_NATS_STREAM`. */
export const DEFAULT_NATS_STREAM = 'LEDGER_FEED';
/** The default of `LEDGER_NATS_SUBJECT`. */
export const DEFAULT_NATS_SUBJECT = 'ledger.feed';
/** The default of `LEDGER_NATS_DUPLICATE_WINDOW`: two minutes, JetStream's own default. */
export const DEFAULT_NATS_DUPLICATE_WINDOW_MS = 120_000;
/** The accepted range of `LEDGER_NATS_DUPLICATE_WINDOW`: 1 second to 7 days. */
export const NATS_DUPLICATE_WINDOW_LIMITS = { min: 1000, max: 7 * 86_400_000 } as const;

/**
 * The NATS settings from `raw` (a setting's trimmed value, undefined when unset) and `name` (the
 * setting's name for messages). Throws {@link ConfigError} naming the first bad one.
 */
export function parseNatsSettings(
  raw: (key: keyof NatsSettings) => string | undefined,
  name: (key: keyof NatsSettings) => string,
): NatsSettings {
  const natsUrl = raw('natsUrl');
  const server = natsUrl === undefined ? undefined : parseNatsUrl(natsUrl, name('natsUrl'));
  const natsToken = raw('natsToken');
  if (natsToken !== undefined && !/^[\x21-\x7e]{1,1024}$/.test(natsToken)) {
    throw new ConfigError(name('natsToken'), 'must be 1 to 1024 printable characters without spaces');
  }
  if (server?.user !== undefined && natsToken !== undefined) {
    throw new ConfigError(
      name('natsToken'),
      `cannot be used with a user in ${name('natsUrl')}: give one or the other`,
    );
  }
  return {
    natsUrl,
    natsStream: parseNatsStream(raw('natsStream'), name('natsStream')),
    natsSubject: parseNatsSubject(raw('natsSubject'), name('natsSubject')),
    natsDuplicateWindowMs: parseWindow(raw('natsDuplicateWindowMs'), name('natsDuplicateWindowMs')),
    natsToken,
  };
}

/** Where the NATS destination connects, and as whom. */
export interface NatsServer {
  /** `host:port`. */
  server: string;
  /** Whether the URL asked for TLS (`tls://`): the client then refuses a server without it. */
  tls: boolean;
  user: string | undefined;
  pass: string | undefined;
}

/**
 * `nats://[user:password@]host[:port]` or `tls://…` as what the client takes: the server apart
 * from the user and password, which the client does not read from a URL.
 */
export function parseNatsUrl(value: string, setting: string): NatsServer {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(setting, 'is not a valid URL');
  }
  if (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') {
    throw new ConfigError(setting, 'must start with nats:// or tls://');
  }
  if (parsed.hostname === '' || !['', '/'].includes(parsed.pathname) || parsed.search !== '') {
    throw new ConfigError(setting, 'must be nats://[user:password@]host[:port], without a path or a query');
  }
  const host = `${parsed.hostname}:${parsed.port || '4222'}`;
  return {
    server: host,
    tls: parsed.protocol === 'tls:',
    user: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    pass: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
  };
}

/** A stream name JetStream accepts and a shell types as it is: letters, digits, `_` and `-`, at most 64. */
function parseNatsStream(value: string | undefined, setting: string): string {
  if (value === undefined) return DEFAULT_NATS_STREAM;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) {
    throw new ConfigError(setting, `must be 1 to 64 letters, digits, '_' or '-' (got '${value}')`);
  }
  return value;
}

/**
 * A subject prefix: words of letters, digits, `_` and `-` joined by dots, no wildcard (the stream
 * captures `<prefix>.>`), at most 128 characters.
 */
function parseNatsSubject(value: string | undefined, setting: string): string {
  if (value === undefined) return DEFAULT_NATS_SUBJECT;
  if (value.length > 128 || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(value)) {
    throw new ConfigError(
      setting,
      `must be dot-separated words of letters, digits, '_' or '-' like ledger.feed, without wildcards (got '${value}')`,
    );
  }
  return value;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The duplicate window, written `<whole number><unit>` with unit `s`, `m`, `h` or `d`, in ms. */
function parseWindow(value: string | undefined, setting: string): number {
  if (value === undefined) return DEFAULT_NATS_DUPLICATE_WINDOW_MS;
  const match = /^(\d{1,7})(s|m|h|d)$/.exec(value);
  const ms = match === null ? Number.NaN : Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? Number.NaN);
  if (!(ms >= NATS_DUPLICATE_WINDOW_LIMITS.min && ms <= NATS_DUPLICATE_WINDOW_LIMITS.max)) {
    throw new ConfigError(setting, `must be a duration from 1s to 7d like 2m, 90s or 1h (got '${value}')`);
  }
  return ms;
}
