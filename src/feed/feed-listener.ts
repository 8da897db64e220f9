/**
 * The one database listener of a process: a connection of its own that LISTENs to the feed's two
 * channels and calls back, reconnecting when it drops. Without a server to listen to (the
 * embedded database) it polls instead.
 */
import pg from 'pg';
import type { Logger } from '../logger.js';
import { COMMIT_CHANNEL, STAMPED_CHANNEL } from './feed-sql.js';

/** What the listener hears. */
export interface FeedSignals {
  /** A transaction that wrote events committed (or, after a reconnect or a poll, may have). */
  committed(): void;
  /** Some process stamped positions up to `head` (or, after a reconnect or a poll, may have). */
  stamped(head: number | null): void;
}

/** A running listener. */
export interface FeedListener {
  close(): Promise<void>;
}

/** How long the listener waits before connecting again after its connection dropped. */
export const RECONNECT_MS = 1000;

/**
 * How often a listener that cannot hear notifications (the embedded database), or has lost its
 * connection, asks anyway. Also a listening one does, more rarely (notifications are lost while
 * it reconnects).
 */
export const POLL_MS = { unheard: 250, heard: 5000 } as const;

/** Listens on `databaseUrl` (PostgreSQL), or polls when there is none. */
export function startFeedListener(input: {
  databaseUrl: string | undefined;
  signals: FeedSignals;
  logger: Logger;
}): FeedListener {
  const { databaseUrl, signals, logger } = input;
  let closed = false;
  let client: pg.Client | undefined;
  let connected = false;
  let reconnect: NodeJS.Timeout | undefined;
  const wakeAll = () => {
    signals.committed();
    signals.stamped(null);
  };
  const connect = async () => {
    if (closed || databaseUrl === undefined) return;
    const next = new pg.Client({ connectionString: databaseUrl, application_name: 'ledger-indexer-feed' });
    client = next;
    next.on('notification', (message) => {
      if (message.channel === COMMIT_CHANNEL) signals.committed();
      else if (message.channel === STAMPED_CHANNEL) signals.stamped(Number(message.payload) || null);
    });
    next.on('error', (error) => {
      logger.warn({ err: error }, 'feed listener connection failed');
      dropped(next);
    });
    next.on('end', () => dropped(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${COMMIT_CHANNEL}; LISTEN ${STAMPED_CHANNEL}`);
      connected = true;
      // What was notified while not listening is read now.
      wakeAll();
    } catch (error) {
      logger.warn({ err: error }, 'feed listener cannot connect');
      dropped(next);
    }
  };
  const dropped = (which: pg.Client) => {
    if (client !== which) return;
    client = undefined;
    connected = false;
    void which.end().catch(() => undefined);
    if (!closed && reconnect === undefined) {
      reconnect = setTimeout(() => {
        reconnect = undefined;
        void connect();
      }, RECONNECT_MS);
    }
  };
  let lastPoll = Date.now();
  const poll = setInterval(() => {
    const every = connected ? POLL_MS.heard : POLL_MS.unheard;
    if (Date.now() - lastPoll < every) return;
    lastPoll = Date.now();
    wakeAll();
  }, POLL_MS.unheard);
  poll.unref();
  void connect();
  return {
    async close() {
      closed = true;
      clearInterval(poll);
      clearTimeout(reconnect);
      const open = client;
      client = undefined;
      await open?.end().catch(() => undefined);
    },
  };
}
