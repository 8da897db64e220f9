import { Redis, type RedisOptions } from 'ioredis';
import { settlesWithin } from '../abort.js';
import { redactUrl } from '../config.js';
import { RedisAuthError, RedisUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createFailureLimiter, credentialProblem, describeRedisFailure } from './redis-failures.js';

/**
 * Connection attempts in a row a command that must end (`schedule`, `status`) makes before giving
 * up: about 2 s of backoff against a refused port.
 */
export const COMMAND_CONNECT_ATTEMPTS = 5;

/** Options of {@link openRedis}; each has a default. */
export interface RedisLinkOptions {
  /** Where failures go: one secret-free line per distinct failure, repeated at most every `logEveryMs`. Default: nowhere. */
  logger?: Logger | undefined;
  /** Connection attempts in a row before giving up (commands that must end). Default: unlimited. */
  connectAttempts?: number | undefined;
  /** How often a failure that lasts is logged again. Default 30000 ms. */
  logEveryMs?: number | undefined;
}

/** A Redis connection whose failures are watched: logged without secrets, credential refusals noted. */
export interface RedisLink {
  connection: Redis;
  /** The URL with its password masked. */
  shownUrl: string;
  /**
   * Resolves once the connection is ready. Rejects with `RedisAuthError` when Redis refuses the
   * credentials, `RedisUnavailableError` when `connectAttempts` are spent, or the signal's reason.
   */
  ready(signal?: AbortSignal): Promise<void>;
  /**
   * Takes an error of this connection or of one BullMQ duplicated from it (give it to
   * `queue.on('error')` and `worker.on('error')`): logs it and notes a credential refusal.
   */
  report(error: unknown): void;
  /** Aborted, with a `RedisAuthError`, once Redis refuses the credentials; no connection of the link reconnects after that. */
  refused: AbortSignal;
  /**
   * From now on no connection of the link (BullMQ's duplicates included) reconnects: a shutdown
   * while Redis is down, when closing would otherwise wait for it forever.
   */
  stopReconnecting(): void;
  /** Whether every connection of the link, duplicates included, has ended within `withinMs`. */
  ended(withinMs: number): Promise<boolean>;
}

/**
 * An ioredis connection that hands each of its duplicates to `adopt`: BullMQ duplicates the
 * connection it is given (two per worker), and those copies need the same watching.
 */
class WatchedRedis extends Redis {
  readonly #adopt: (copy: Redis) => void;

  constructor(url: string, options: Omit<RedisOptions, 'replyMapping'>, adopt: (copy: Redis) => void) {
    super(url, options);
    this.#adopt = adopt;
  }

  override duplicate<O extends Partial<RedisOptions> | undefined = undefined>(override?: O) {
    const copy = super.duplicate(override);
    this.#adopt(copy);
    return copy;
  }
}

/**
 * Opens a Redis connection for BullMQ. Workers block on Redis and must ride out a restart, so
 * their connection retries every command forever (`maxRetriesPerRequest: null`); producers (commands
 * that enqueue and exit) fail a command after a few reconnections. Both reconnect with a capped
 * backoff, `connectAttempts` times at most, and never again once the credentials were refused.
 */
export function openRedis(
  url: string,
  role: 'worker' | 'producer',
  options: RedisLinkOptions = {},
): RedisLink {
  const shownUrl = redactUrl(url);
  const refusal = new AbortController();
  const attempts = options.connectAttempts ?? Number.POSITIVE_INFINITY;
  const limiter = createFailureLimiter({ intervalMs: options.logEveryMs ?? 30_000 });
  let lastFailure: string | undefined;
  let reconnecting = true;
  const all = new Set<Redis>();
  const connection: Redis = new WatchedRedis(
    url,
    {
      maxRetriesPerRequest: role === 'worker' ? null : 3,
      enableOfflineQueue: true,
      // Duplicates copy these options, so this closure governs their reconnecting too.
      retryStrategy: (times) =>
        !reconnecting || refusal.signal.aborted || times >= attempts ? null : Math.min(times * 200, 2000),
      lazyConnect: false,
    },
    (copy) => watch(copy),
  );

  const report = (error: unknown): void => {
    const problem = credentialProblem(error);
    if (problem !== null && !refusal.signal.aborted) refusal.abort(new RedisAuthError(shownUrl, problem));
    lastFailure = describeRedisFailure(error, url);
    const { log, suppressed } = limiter.admit(lastFailure);
    if (log) {
      options.logger?.warn(
        { redis_url: shownUrl, error: lastFailure, ...(suppressed > 0 ? { repeats: suppressed } : {}) },
        'redis connection error',
      );
    }
  };
  const watch = (client: Redis): void => {
    all.add(client);
    client.on('error', report);
    client.once('end', () => all.delete(client));
  };
  watch(connection);
  connection.on('ready', () => {
    if (lastFailure === undefined) return;
    lastFailure = undefined;
    limiter.reset();
    options.logger?.info({ redis_url: shownUrl }, 'redis connection restored');
  });

  const ready = (signal?: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      const settle = (outcome: () => void): void => {
        connection.off('ready', onReady);
        connection.off('end', onEnd);
        refusal.signal.removeEventListener('abort', onRefused);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const onReady = (): void => settle(resolve);
      const onRefused = (): void => settle(() => reject(refusal.signal.reason));
      const onAbort = (): void => settle(() => reject(signal?.reason));
      const onEnd = (): void =>
        refusal.signal.aborted
          ? onRefused()
          : settle(() =>
              reject(
                new RedisUnavailableError(
                  shownUrl,
                  `${lastFailure ?? 'connection closed'}` +
                    (Number.isFinite(attempts) ? ` (gave up after ${attempts} attempts)` : ''),
                ),
              ),
            );
      if (signal?.aborted) return onAbort();
      if (refusal.signal.aborted) return onRefused();
      if (connection.status === 'ready') return onReady();
      if (connection.status === 'end') return onEnd();
      connection.once('ready', onReady);
      connection.once('end', onEnd);
      refusal.signal.addEventListener('abort', onRefused, { once: true });
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  const stopReconnecting = (): void => {
    reconnecting = false;
  };
  const ended = (withinMs: number): Promise<boolean> =>
    settlesWithin(
      Promise.all(
        [...all].map((client) =>
          client.status === 'end' ? undefined : new Promise((resolve) => client.once('end', resolve)),
        ),
      ),
      withinMs,
    );
  return { connection, shownUrl, ready, report, refused: refusal.signal, stopReconnecting, ended };
}

/** {@link openRedis} for callers that need only the connection (its failures are still watched). */
export function createRedisConnection(
  url: string,
  role: 'worker' | 'producer',
  options: RedisLinkOptions = {},
): Redis {
  return openRedis(url, role, options).connection;
}
