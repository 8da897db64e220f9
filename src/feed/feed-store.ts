/**
 * The feed's I/O on the database: stamping, reading a page of events, expiring old ones. Each
 * function is one short transaction over the statements of `feed-sql.ts`.
 */
import type { Database } from '../db/connect.js';
import { queryRows } from '../db/rows.js';
import { type FeedEvent, type FeedEventRow, feedEventOf } from './feed-event.js';
import {
  boundsStatement,
  eventsAfterStatement,
  expireStatement,
  lockStamps,
  notifyStamped,
  stampStatement,
} from './feed-sql.js';

/** Transactions stamped by one step at most: a backlog (a feed server started late) takes several. */
export const STAMP_BATCH = 5000;

/** What one stamping step did. */
export interface StampResult {
  /** Transactions given positions. */
  transactions: number;
  /** The last position given, or `null` when none was. */
  head: number | null;
}

/**
 * Stamps the transactions committed and not stamped yet, under the stamp lock, and notifies the
 * readers of every process when it stamped any. Idempotent: a step that finds nothing to stamp
 * changes nothing, so every process may run it at any time (at start: what a crashed one left).
 * Committed synchronously whatever the writers do: its commit flushes the log up to it, so a
 * position a reader sees is never lost by a crash with the rows it describes.
 */
export async function stampFeed(database: Database): Promise<StampResult> {
  return database.db.transaction(async (tx) => {
    await tx.execute(lockStamps());
    const [row] = await queryRows<{ transactions: number; head: string | null }>(
      tx,
      stampStatement(STAMP_BATCH),
    );
    const head = row?.head === null || row?.head === undefined ? null : Number(row.head);
    if (head !== null) await tx.execute(notifyStamped(head));
    return { transactions: row?.transactions ?? 0, head };
  });
}

/** A page of the feed after a position. */
export type FeedPage =
  | {
      kind: 'events';
      events: FeedEvent[];
      /** Where the next page starts: the last event's position, or `after` when there was none. */
      position: number;
      /** The last position stamped when read. */
      head: number;
    }
  /** `after` is below the retention's horizon: the events right after it were deleted. */
  | { kind: 'gone'; horizon: number };

/**
 * Up to `limit` events after `after`, in position order, read with the horizon in one snapshot
 * (read only), so a retention step in between cannot make a page skip events silently.
 */
export async function readFeedPage(
  database: Database,
  input: { after: number; limit: number },
): Promise<FeedPage> {
  const { after, limit } = input;
  return database.db.transaction(
    async (tx) => {
      const [bounds] = await queryRows<{ horizon: string | null; head: string | null }>(
        tx,
        boundsStatement(),
      );
      const horizon = Number(bounds?.horizon ?? 0);
      if (after < horizon) return { kind: 'gone', horizon };
      const head = Math.max(Number(bounds?.head ?? 0), horizon);
      if (after >= head) return { kind: 'events', events: [], position: after, head };
      const rows = await queryRows<FeedEventRow>(tx, eventsAfterStatement(after, limit));
      const events = rows.map(feedEventOf);
      return { kind: 'events', events, position: events.at(-1)?.position ?? after, head };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/** Transactions expired by one retention step at most. */
export const EXPIRE_BATCH = 2000;

/**
 * Deletes the events of transactions stamped before `cutoff`, oldest first, in steps of
 * {@link EXPIRE_BATCH} transactions, under the stamp lock; answers the events deleted.
 */
export async function expireFeed(database: Database, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const step = await database.db.transaction(async (tx) => {
      await tx.execute(lockStamps());
      const [row] = await queryRows<{ transactions: number; events: number }>(
        tx,
        expireStatement(cutoff, EXPIRE_BATCH),
      );
      return row ?? { transactions: 0, events: 0 };
    });
    deleted += step.events;
    if (step.transactions < EXPIRE_BATCH) return deleted;
  }
}

/** What {@link catchUpFeed} did. */
export interface FeedCatchUp {
  /** Transactions given positions. */
  stamped: number;
  /** Events deleted by the retention. */
  expired: number;
}

/**
 * Stamps every transaction waiting, step after step, then lets the retention delete what is older
 * than `retentionMs`: what a process that writes but serves no feed (a one-shot `sync` run from
 * cron) does before it exits, so its records reach the feed's readers and the feed stays bounded
 * without a feed server running beside it.
 */
export async function catchUpFeed(
  database: Database,
  input: { retentionMs: number; now?: Date },
): Promise<FeedCatchUp> {
  let stamped = 0;
  for (;;) {
    const step = await stampFeed(database);
    stamped += step.transactions;
    if (step.transactions < STAMP_BATCH) break;
  }
  const now = input.now ?? new Date();
  const expired = await expireFeed(database, new Date(now.getTime() - input.retentionMs));
  return { stamped, expired };
}
