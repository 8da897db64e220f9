/**
 * A process's side of the feed: it stamps what committed (on the triggers' notification), reads
 * each new stretch of events once and hands it to every live reader (one database listener and
 * one read for any number of clients), wakes the long polls, and expires old events.
 */
import type { Database } from '../db/connect.js';
import type { Logger } from '../logger.js';
import { type FeedEvent, type FeedFilter, matchesFilter } from './feed-event.js';
import { startFeedListener } from './feed-listener.js';
import { expireFeed, type FeedPage, readFeedPage, STAMP_BATCH, stampFeed } from './feed-store.js';

/** A live reader: handed each new stretch of events past its position that passes its filter. */
export interface FeedSubscriber {
  /** The last position handed to it (or read by it before it joined). */
  position: number;
  filter: FeedFilter;
  /** Its events of a stretch (maybe none) and where the stretch ends. */
  deliver(events: FeedEvent[], position: number): void;
  /** The hub can no longer follow it (the retention passed it): it ends. */
  lost(): void;
}

/** Options of {@link startFeedHub}. */
export interface FeedHubOptions {
  /** Stamps and expires (writes): the process's own database. */
  database: Database;
  /** Reads pages: a bounded handle of the same database (`Database.bounded`). */
  reader: Database;
  /** Listened to for notifications; absent (the embedded database): polled. */
  databaseUrl: string | undefined;
  /** Events older than this are deleted (`LEDGER_FEED_RETENTION`). */
  retentionMs: number;
  logger: Logger;
  /** Default `() => new Date()`. */
  now?: () => Date;
}

/** The running hub. */
export interface FeedHub {
  /** The last position handed to the live readers: a reader at or past it may join them. */
  head(): number;
  subscribe(subscriber: FeedSubscriber): () => void;
  /** Live readers now. */
  subscribers(): number;
  /** A page of events after `after` (at most {@link READS_AT_ONCE} reads at a time). */
  readPage(after: number, limit: number): Promise<FeedPage>;
  /** Resolves once the head passes `after`, after `ms`, or when `signal` aborts. */
  waitBeyond(after: number, ms: number, signal: AbortSignal): Promise<void>;
  /** Stamps, reads and expires now; resolves when done (tests, and a process that just wrote). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** Events read per stretch handed to the live readers. */
export const PUMP_BATCH = 1000;
/** Page reads of readers catching up at once: the bounded pool has few connections. */
export const READS_AT_ONCE = 2;
/** How often old events are expired. */
export const EXPIRE_EVERY_MS = 60_000;

/** Starts the hub: the listener, a first stamp (what a stopped process left), the retention. */
export async function startFeedHub(options: FeedHubOptions): Promise<FeedHub> {
  const { database, reader, logger } = options;
  const now = options.now ?? (() => new Date());
  const subscribers = new Set<FeedSubscriber>();
  const waiters = createWaiters();
  const reads = limiter(READS_AT_ONCE);
  const first = await readFeedPage(reader, { after: Number.MAX_SAFE_INTEGER, limit: 1 });
  let head = first.kind === 'gone' ? first.horizon : first.head;

  const pump = singleFlight(
    async () => {
      for (;;) {
        if (subscribers.size === 0) {
          // No live reader: the head moves on without reading the events (long polls and readers
          // catching up read their own pages), so a process that only stamps reads nothing more.
          const bounds = await reads(() =>
            readFeedPage(reader, { after: Number.MAX_SAFE_INTEGER, limit: 1 }),
          );
          // A reader that joined meanwhile (at the old head) is handed the events from it on.
          if (subscribers.size > 0) continue;
          if (bounds.kind === 'events') head = Math.max(head, bounds.head);
          waiters.wake(head);
          return;
        }
        const page = await reads(() => readFeedPage(reader, { after: head, limit: PUMP_BATCH }));
        if (page.kind === 'gone') {
          // Behind the retention (a hub stalled for days): its readers start again from their positions.
          for (const subscriber of subscribers) subscriber.lost();
          subscribers.clear();
          head = page.horizon;
          continue;
        }
        handOut(subscribers, page);
        head = Math.max(head, page.position);
        waiters.wake(head);
        if (page.events.length < PUMP_BATCH) return;
      }
    },
    (error) => logger.warn({ err: error }, 'feed: reading new events failed'),
  );
  const stamp = singleFlight(
    async () => {
      // A backlog (no feed served for a while) is stamped step after step, each a short one.
      for (let full = true; full; ) {
        const result = await stampFeed(database);
        if (result.head !== null) await pump.run();
        full = result.transactions === STAMP_BATCH;
      }
    },
    (error) => logger.warn({ err: error }, 'feed: stamping failed'),
  );
  const expire = singleFlight(
    async () => {
      const deleted = await expireFeed(database, new Date(now().getTime() - options.retentionMs));
      if (deleted > 0) logger.info({ events: deleted }, 'feed: expired old events');
    },
    (error) => logger.warn({ err: error }, 'feed: expiring old events failed'),
  );

  const listener = startFeedListener({
    databaseUrl: options.databaseUrl,
    logger,
    signals: {
      committed: () => void stamp.run(),
      stamped: (at) => {
        if (at === null || at > head) void pump.run();
      },
    },
  });
  const expiring = setInterval(() => void expire.run(), EXPIRE_EVERY_MS);
  expiring.unref();
  await stamp.run();
  await expire.run();

  return {
    head: () => head,
    subscribe(subscriber) {
      subscribers.add(subscriber);
      return () => subscribers.delete(subscriber);
    },
    subscribers: () => subscribers.size,
    readPage: (after, limit) => reads(() => readFeedPage(reader, { after, limit })),
    waitBeyond: (after, ms, signal) => (head > after ? Promise.resolve() : waiters.wait(after, ms, signal)),
    async settle() {
      await stamp.run();
      await pump.run();
      await expire.run();
    },
    async close() {
      clearInterval(expiring);
      await listener.close();
      await Promise.all([stamp.idle(), pump.idle(), expire.idle()]);
      waiters.wake(Number.MAX_SAFE_INTEGER);
    },
  };
}

/** Hands a stretch of events to each live reader: those past its position that pass its filter. */
function handOut(subscribers: Set<FeedSubscriber>, page: Extract<FeedPage, { kind: 'events' }>): void {
  for (const subscriber of subscribers) {
    const mine = page.events.filter(
      (e) => e.position > subscriber.position && matchesFilter(e, subscriber.filter),
    );
    if (page.position > subscriber.position) subscriber.position = page.position;
    subscriber.deliver(mine, page.position);
  }
}

/** The long polls waiting for the head to pass their position. */
function createWaiters() {
  const waiting = new Set<{ after: number; done: () => void }>();
  return {
    wait(after: number, ms: number, signal: AbortSignal): Promise<void> {
      if (signal.aborted) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(() => done(), ms);
        const done = () => {
          clearTimeout(timer);
          waiting.delete(waiter);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const waiter = { after, done };
        waiting.add(waiter);
        signal.addEventListener('abort', done, { once: true });
      });
    },
    wake(head: number): void {
      for (const waiter of waiting) if (head > waiter.after) waiter.done();
    },
  };
}

/**
 * One run at a time: a call during a run asks for one more run after it (what it was called for
 * may have come too late for the run under way); the returned promise ends with that run.
 */
function singleFlight(work: () => Promise<void>, onError: (error: unknown) => void) {
  let running: Promise<void> | undefined;
  let again = false;
  const loop = async () => {
    do {
      again = false;
      try {
        await work();
      } catch (error) {
        onError(error);
      }
    } while (again);
    running = undefined;
  };
  return {
    run(): Promise<void> {
      if (running !== undefined) {
        again = true;
        return running;
      }
      running = loop();
      return running;
    },
    idle: () => running ?? Promise.resolve(),
  };
}

/** At most `size` of the given tasks run at once; the others wait their turn. */
function limiter(size: number) {
  let active = 0;
  const queue: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= size) await new Promise<void>((resolve) => queue.push(resolve));
    active += 1;
    try {
      return await task();
    } finally {
      active -= 1;
      queue.shift()?.();
    }
  };
}
