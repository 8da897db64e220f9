/**
 * The settings of the change feed's sinks (the webhook, and the tries and lease every sink shares),
 * parsed for `loadConfig` (src/config.ts, the one reader of the environment, which names them in
 * `ENV`): pure functions of the readers it hands over.
 */
import { ConfigError } from './errors.js';

/** The events a sink gets: the fields of `/feed`'s filter. */
export interface SinkFilter {
  account?: string;
  tokenTag?: string;
  action?: string;
}

/** The sinks' part of the configuration (`Config` extends it). */
export interface SinkSettings {
  /**
   * `LEDGER_WEBHOOK_URL`: where the webhook sink POSTs the change feed, in signed batches, from
   * every process that serves the feed (one at a time). Unset: no webhook sink.
   */
  webhookUrl: string | undefined;
  /** `LEDGER_WEBHOOK_SECRET`: the webhook's HMAC-SHA256 key, 16 to 256 printable characters; required with `LEDGER_WEBHOOK_URL`. */
  webhookSecret: string | undefined;
  /**
   * `LEDGER_WEBHOOK_FILTER`: the events the webhook gets, in `/feed`'s query form
   * (`action=transfer&tokenTag=…&account=…`). Default: every event.
   */
  webhookFilter: SinkFilter;
  /**
   * `LEDGER_WEBHOOK_TIMEOUT_MS`: how long the webhook's receiver has to connect and answer a batch
   * before the try counts as failed (and is tried again), 1000 to 120000. Default 10000.
   */
  webhookTimeoutMs: number;
  /** `LEDGER_SINK_TRIES`: tries of a batch before a sink dead-letters it and goes on, 1 to 100. Default 10. */
  sinkTries: number;
  /** `LEDGER_SINK_RETRY_MIN_MS`: a sink's first wait before trying a batch again, 0 to 60000; it doubles at each try. Default 1000. */
  sinkRetryMinMs: number;
  /** `LEDGER_SINK_RETRY_MAX_MS`: a sink's longest wait between tries (and longest `Retry-After` honoured), from `LEDGER_SINK_RETRY_MIN_MS` to 3600000. Default 300000. */
  sinkRetryMaxMs: number;
  /** `LEDGER_SINK_LEASE_MS`: how long a sink's lease lasts unrenewed (another process takes over a crashed one's sink after it), 1000 to 600000. Default 30000. */
  sinkLeaseMs: number;
}

/** The defaults of the sinks' tries, waits and lease. */
export const SINK_DEFAULTS = {
  tries: 10,
  retryMinMs: 1000,
  retryMaxMs: 300_000,
  leaseMs: 30_000,
  webhookTimeoutMs: 10_000,
} as const;

/** The accepted range of each numeric sink setting. */
export const SINK_LIMITS = {
  sinkTries: { min: 1, max: 100 },
  sinkRetryMinMs: { min: 0, max: 60_000 },
  sinkRetryMaxMs: { min: 0, max: 3_600_000 },
  sinkLeaseMs: { min: 1000, max: 600_000 },
  webhookTimeoutMs: { min: 1000, max: 120_000 },
} as const;

/** How `loadConfig` reads a sink setting: each throws a {@link ConfigError} naming it. */
export interface SinkSettingReaders {
  raw(key: keyof SinkSettings): string | undefined;
  name(key: keyof SinkSettings): string;
  int(key: keyof SinkSettings, fallback: number, range: { min: number; max: number }): number;
  url(key: keyof SinkSettings, protocols: readonly string[]): string | undefined;
}

/** The sinks' settings; a webhook URL needs its secret. Throws {@link ConfigError} naming the first bad one. */
export function parseSinkSettings({ raw, name, int, url }: SinkSettingReaders): SinkSettings {
  const sinkRetryMinMs = int('sinkRetryMinMs', SINK_DEFAULTS.retryMinMs, SINK_LIMITS.sinkRetryMinMs);
  const sinkRetryMaxMs = int('sinkRetryMaxMs', SINK_DEFAULTS.retryMaxMs, SINK_LIMITS.sinkRetryMaxMs);
  if (sinkRetryMaxMs < sinkRetryMinMs) {
    throw new ConfigError(name('sinkRetryMaxMs'), `must be >= ${name('sinkRetryMinMs')} (${sinkRetryMinMs})`);
  }
  const webhookUrl = url('webhookUrl', ['http:', 'https:']);
  const webhookSecret = raw('webhookSecret');
  if (webhookSecret !== undefined && !/^[\x21-\x7e]{16,256}$/.test(webhookSecret)) {
    throw new ConfigError(name('webhookSecret'), 'must be 16 to 256 printable characters without spaces');
  }
  if (webhookUrl !== undefined && webhookSecret === undefined) {
    throw new ConfigError(
      name('webhookSecret'),
      `is required when ${name('webhookUrl')} is set (it signs every batch)`,
    );
  }
  return {
    webhookUrl,
    webhookSecret,
    webhookFilter: parseSinkFilter(raw('webhookFilter'), name('webhookFilter')),
    webhookTimeoutMs: int('webhookTimeoutMs', SINK_DEFAULTS.webhookTimeoutMs, SINK_LIMITS.webhookTimeoutMs),
    sinkTries: int('sinkTries', SINK_DEFAULTS.tries, SINK_LIMITS.sinkTries),
    sinkRetryMinMs,
    sinkRetryMaxMs,
    sinkLeaseMs: int('sinkLeaseMs', SINK_DEFAULTS.leaseMs, SINK_LIMITS.sinkLeaseMs),
  };
}

const SINK_FILTER_KEYS = ['account', 'tokenTag', 'action'] as const;

/** A filter in `/feed`'s query form: `account`, `tokenTag` and `action`, each at most once. */
function parseSinkFilter(value: string | undefined, setting: string): SinkFilter {
  if (value === undefined) return {};
  const filter: Record<string, string> = {};
  for (const [key, given] of new URLSearchParams(value)) {
    if (!(SINK_FILTER_KEYS as readonly string[]).includes(key) || key in filter) {
      const keys = SINK_FILTER_KEYS.map((k) => `${k}=…`).join(', ');
      throw new ConfigError(setting, `must be ${keys} joined by & (each once; got '${key}')`);
    }
    if (given === '' || given.length > 200) {
      throw new ConfigError(setting, `${key} must be 1 to 200 characters`);
    }
    filter[key] = given;
  }
  return filter;
}
