/**
 * The change feed's tables (docs/design.md, "The change feed"). The events are written by
 * triggers on `ledger_transactions` (migration `0022_feed_triggers.sql`, written by hand: drizzle-kit
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
 * One row per record stored or changed, thin: what the feed filters on and the tracked fields.
 * Ordered inside its transaction by `id`; its position is its transaction's first position plus
 * `id - min_event_id` (see {@link ledgerFeedTransactions}). The tracked fields are plain columns
 * (their values after the event) rather than a JSON object built for every row: that cost the
 * database half the work of a copied backfill again, the columns a fifth (docs/design.md).
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
    status: text('status').notNull(),
    internalStatus: text('internal_status').notNull(),
    targetChainTxHash: text('target_chain_tx_hash').notNull(),
    expressChainTxHash: text('express_chain_tx_hash').notNull(),
    expressWithdrawFee: text('express_withdraw_fee').notNull(),
    expressRefundLedgerHash: text('express_refund_ledger_hash').notNull(),
    expressErr: text('express_err').notNull(),
    /** `changed` only: the tracked fields that differ, with their values before (`{status: "confirmed"}`). */
    old: jsonb('old'),
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
