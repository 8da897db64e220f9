/**
 * The feed's sinks (docs/design.md, "The change feed", "Sinks"): where each one stands in the feed,
 * who delivers it now, and the batches it gave up on. Written by `src/db/queries/sink-positions.ts`
 * and `sink-dead-letters.ts`.
 */
import { bigint, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const tstz = <Name extends string>(name: Name) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One row per sink, by name: its stored position (every event at or below it is delivered or
 * dead-lettered) and its lease, so only one process delivers it at a time.
 */
export const feedSinks = pgTable('feed_sinks', {
  /** The sink's name (`webhook`, `nats`): what the configuration calls it. */
  name: text('name').primaryKey(),
  /** The target's kind, as last configured. */
  kind: text('kind').notNull(),
  /** The feed filter, as last configured (`{}`: every event). */
  filter: jsonb('filter').notNull().default({}),
  /** The last position delivered (or dead-lettered, or filtered out): the sink resumes after it. */
  position: bigint('position', { mode: 'number' }).notNull().default(0),
  /** Events acknowledged by the far side, in all. */
  deliveredEvents: bigint('delivered_events', { mode: 'number' }).notNull().default(0),
  /** When a batch was last acknowledged. */
  deliveredAt: tstz('delivered_at'),
  /** The last failure (a failed try, a dead letter, an expired stretch), and when. */
  lastError: text('last_error'),
  lastErrorAt: tstz('last_error_at'),
  /** The runner delivering it (`sink:<host>:<pid>:<random>`), until `lease_expires_at`. */
  leaseOwner: text('lease_owner'),
  leaseExpiresAt: tstz('lease_expires_at'),
  createdAt: tstz('created_at').notNull().defaultNow(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

/**
 * A batch a sink gave up on and moved past: its last try failed, its failure could not be helped
 * by trying again, or its events expired before they were delivered (then `events` and `body`
 * are null). Kept for a person to look at and replay by hand.
 */
export const feedSinkDeadLetters = pgTable(
  'feed_sink_dead_letters',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    sink: text('sink')
      .notNull()
      .references(() => feedSinks.name, { onDelete: 'cascade' }),
    /** The positions the batch covers (for an expired stretch, the positions skipped). */
    firstPosition: bigint('first_position', { mode: 'number' }).notNull(),
    lastPosition: bigint('last_position', { mode: 'number' }).notNull(),
    /** Events in the batch; null for an expired stretch. */
    events: integer('events'),
    /** The batch as JSON, byte for byte the body a webhook was sent; null for an expired stretch. */
    body: text('body'),
    reason: text('reason').notNull(),
    /** Tries made (0 for an expired stretch). */
    attempts: integer('attempts').notNull(),
    createdAt: tstz('created_at').notNull().defaultNow(),
  },
  (t) => [index('feed_sink_dead_letters_sink_idx').on(t.sink, t.id)],
);
