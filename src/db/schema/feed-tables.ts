/**
 * The change feed's tables (docs/design.md, "The change feed"). The events are written by
 * triggers on `ledger_transactions` (migration `0021_feed_triggers.sql`, written by hand: drizzle-kit
 * cannot express triggers), in the transaction that writes the rows; positions are stamped on
 * whole transactions after they commit, by `src/feed/stamp-sql.ts`.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  customType,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** PostgreSQL's 64-bit transaction id (`pg_current_xact_id()`), read as text. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * One row per record stored or changed, thin: what the feed filters on and the fields that
 * changed. Ordered inside its transaction by `id`; its position is its transaction's first
 * position plus `id - min_event_id` (see {@link ledgerFeedTransactions}).
 */
export const ledgerFeedEvents = pgTable(
  'ledger_feed_events',
  {
    /** The writing transaction (`pg_current_xact_id()`). */
    xid: xid8('xid').notNull(),
    id: bigint('id', { mode: 'number' }).generatedAlwaysAsIdentity(),
    /** `stored` (a new record) or `changed` (status, internal status, target-chain hash or express). */
    kind: text('kind').notNull(),
    rawId: bigint('raw_id', { mode: 'number' }).notNull(),
    action: text('action').notNull(),
    tokenTag: text('token_tag').notNull(),
    fromAccount: text('from_account').notNull(),
    toAccount: text('to_account').notNull(),
    /** `stored`: the tracked fields' values; `changed`: `{field: [old, new]}` of those that differ. */
    fields: jsonb('fields').notNull(),
  },
  (t) => [primaryKey({ columns: [t.xid, t.id] })],
);

/**
 * One row per transaction that wrote events: added unstamped by the triggers, stamped once it
 * has committed with a range of positions (`first_position` to `last_position`) following the
 * last stamped one, so positions grow in the order transactions are stamped, never below one a
 * reader has seen.
 */
export const ledgerFeedTransactions = pgTable(
  'ledger_feed_transactions',
  {
    xid: xid8('xid').primaryKey(),
    firstPosition: bigint('first_position', { mode: 'number' }),
    lastPosition: bigint('last_position', { mode: 'number' }),
    /** The smallest event id of the transaction: an event's offset in the range is `id - min_event_id`. */
    minEventId: bigint('min_event_id', { mode: 'number' }),
    stampedAt: timestamp('stamped_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    uniqueIndex('ledger_feed_transactions_last_position_key').on(t.lastPosition),
    index('ledger_feed_transactions_unstamped_idx').on(t.xid).where(sql`${t.lastPosition} IS NULL`),
    // The retention finds the last transaction stamped before its cutoff.
    index('ledger_feed_transactions_stamped_at_idx').on(t.stampedAt),
  ],
);

/** One row: every position at or below `retained_after` was deleted by the retention. */
export const ledgerFeedHorizon = pgTable('ledger_feed_horizon', {
  id: bigint('id', { mode: 'number' }).primaryKey().default(1),
  retainedAfter: bigint('retained_after', { mode: 'number' }).notNull().default(0),
});
