import { Redis } from 'ioredis';

/**
 * Opens a Redis connection for BullMQ. Workers block on Redis and must ride out a restart, so
 * their connection retries every command forever (`maxRetriesPerRequest: null`) and reconnects
 * with a capped backoff; producers (commands that enqueue and exit) fail fast instead.
 */
export function createRedisConnection(url: string, role: 'worker' | 'producer'): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: role === 'worker' ? null : 3,
    enableOfflineQueue: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  });
}
