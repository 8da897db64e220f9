/**
 * The feed as a process serves it: its hub, started on the first need and again after a failure
 * (a database down or not migrated yet must not keep the rest of the HTTP surface from starting),
 * and the handler of `GET /feed`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from '../db/connect.js';
import type { Logger } from '../logger.js';
import { createFeedConsumers, type FeedConsumers } from './feed-consumers.js';
import { createFeedHandler, type FeedHttpLimits } from './feed-http.js';
import { type FeedHub, startFeedHub } from './feed-hub.js';

/** The feed's reads: a pool of their own, bounded like the rest of the surface's. */
export const FEED_READ_DATABASE = { connectMs: 2000, statementMs: 5000, maxConnections: 3 } as const;

/** How long after a failed start the next request tries again. */
export const RESTART_AFTER_MS = 5000;

/** A process's feed. */
export interface FeedService {
  /** Answers `GET /feed`. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** The hub once started (tests). */
  hub(): Promise<FeedHub>;
  /** Who reads the feed from this process, and how far each has got. */
  consumers: FeedConsumers;
  /** The last position handed to the live readers; `null` while the hub has not started. */
  head(): number | null;
  close(): Promise<void>;
}

/** Opens the feed over `database` (stamps, expiry) and a bounded handle of `readFrom` (reads). */
export function openFeedService(input: {
  database: Database;
  /** Where the feed's pages are read: a role that may only read. Default `database`. */
  readFrom?: Database | undefined;
  databaseUrl: string | undefined;
  retentionMs: number;
  logger: Logger;
  limits?: Partial<FeedHttpLimits> | undefined;
}): FeedService {
  const { logger } = input;
  const reader = (input.readFrom ?? input.database).bounded(FEED_READ_DATABASE);
  let starting: Promise<FeedHub> | undefined;
  let started: FeedHub | undefined;
  let failedAt = 0;
  let closed = false;
  const hub = (): Promise<FeedHub> => {
    if (starting === undefined || (failedAt > 0 && Date.now() - failedAt > RESTART_AFTER_MS)) {
      failedAt = 0;
      starting = startFeedHub({ ...input, reader }).then(
        (opened) => {
          started = opened;
          return opened;
        },
        (error: unknown) => {
          failedAt = Date.now();
          logger.warn({ err: error }, 'feed: cannot start');
          throw error;
        },
      );
    }
    return starting;
  };
  // Started at once, so stamping begins before the first reader comes; after a failed start, again
  // now and then (a database that comes back gets its stamps without waiting for a reader).
  hub().catch(() => undefined);
  const retry = setInterval(() => {
    if (failedAt > 0) hub().catch(() => undefined);
  }, RESTART_AFTER_MS);
  retry.unref();
  let handler: ReturnType<typeof createFeedHandler> | undefined;
  const consumers = createFeedConsumers();
  return {
    async handle(request, response) {
      let opened: FeedHub;
      try {
        opened = await hub();
      } catch (error) {
        const body = `${JSON.stringify({ error: `the feed is not available: ${firstLine(error)}` })}\n`;
        response.writeHead(503, {
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'no-store',
        });
        response.end(body);
        return;
      }
      handler ??= createFeedHandler({ hub: opened, consumers, logger, limits: input.limits });
      await handler(request, response);
    },
    hub,
    consumers,
    head: () => started?.head() ?? null,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(retry);
      const started = await starting?.catch(() => undefined);
      await started?.close();
      await reader.close();
    },
  };
}

function firstLine(error: unknown): string {
  const line = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
