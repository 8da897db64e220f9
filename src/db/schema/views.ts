/**
 * Views for analysts, generated into the migrations like the tables: movements of value, daily
 * volume, balances and status latency, with amounts in token units (`ledger_tokens.decimals`)
 * beside the exact raw amounts. `verify --balances` compares the balances view with the service.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  date,
  doublePrecision,
  integer,
  numeric,
  pgView,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';

/** An account as one key whatever its case: EVM addresses lower-cased, other ids as they are. */
const accountKey = (column: string) =>
  sql.raw(`CASE WHEN ${column} ~ '^0x[0-9a-fA-F]{40}$' THEN lower(${column}) ELSE ${column} END`);

/**
 * Raw integer amount → token units, exact: multiplied by the literal `1e-<decimals>` (division,
 * or `power(10, -n)`, rounds to 16 significant digits); raw when the token is unknown.
 */
const units = (amount: string, decimals: string) =>
  sql.raw(`trim_scale(${amount} * ('1e-' || coalesce(${decimals}, 0))::numeric)`);

const MOVEMENTS = sql`
  SELECT m.raw_id, m.item_index, m.token_tag, k.symbol, k.decimals, m.action, m.from_account, m.to_account,
         m.amount, ${units('m.amount', 'k.decimals')} AS amount_units,
         m.fee, ${units('m.fee', 'k.decimals')} AS fee_units,
         m.fee_recipient, m.status, m.internal_status_code, m.ledger_time
  FROM (
    SELECT t.raw_id, NULL::integer AS item_index, t.token_tag, t.action, t.from_account, t.to_account, t.amount,
           t.fee, t.fee_recipient, t.status, t.internal_status_code, t.ledger_time
    FROM ledger_transactions t WHERE t.action <> 'bundle'
    UNION ALL
    SELECT b.raw_id, b.item_index, b.tag, t.action, b.from_account, b.to_account, b.amount,
           CASE WHEN b.item_index = 0 THEN t.fee ELSE 0 END, t.fee_recipient, t.status, t.internal_status_code, t.ledger_time
    FROM ledger_bundle_items b JOIN ledger_transactions t ON t.raw_id = b.raw_id
    WHERE t.action = 'bundle' AND t.internal_status_code = 'success'
  ) m
  LEFT JOIN ledger_tokens k ON k.tag = m.token_tag`;

/**
 * One row per real movement of value: every record that is not a bundle (mints, transfers,
 * burns), and the items of bundles whose `internal_status_code` is `success` (a failed
 * bundle's items never moved). A bundle's own fee is carried on its first item's row, so sums
 * of `fee` count it once.
 */
export const ledgerMovements = pgView('ledger_movements', {
  rawId: bigint('raw_id', { mode: 'number' }).notNull(),
  /** Null for a record, the item's index for a bundle item. */
  itemIndex: integer('item_index'),
  tokenTag: text('token_tag').notNull(),
  symbol: text('symbol'),
  decimals: integer('decimals'),
  action: text('action').notNull(),
  fromAccount: text('from_account').notNull(),
  toAccount: text('to_account').notNull(),
  amount: numeric('amount').notNull(),
  amountUnits: numeric('amount_units').notNull(),
  fee: numeric('fee').notNull(),
  feeUnits: numeric('fee_units').notNull(),
  feeRecipient: text('fee_recipient').notNull(),
  status: text('status').notNull(),
  internalStatusCode: text('internal_status_code'),
  ledgerTime: timestamp('ledger_time', { withTimezone: true }),
}).as(MOVEMENTS);

/**
 * Per day (UTC, of `ledger_time`; packaged records only), token and action: count and volume of
 * the movements, and the fees charged, every bundle's counted once as `ledger_account_balances`
 * counts it: on its first item's movement, or, where no item moved (a failed bundle, or one with
 * no items its `data` shows), on a row of its own that moves nothing.
 */
export const ledgerDailyVolume = pgView('ledger_daily_volume', {
  day: date('day').notNull(),
  tokenTag: text('token_tag').notNull(),
  symbol: text('symbol'),
  action: text('action').notNull(),
  movements: bigint('movements', { mode: 'number' }).notNull(),
  volume: numeric('volume').notNull(),
  volumeUnits: numeric('volume_units').notNull(),
  fees: numeric('fees').notNull(),
  feesUnits: numeric('fees_units').notNull(),
}).as(sql`
  SELECT (m.ledger_time AT TIME ZONE 'UTC')::date AS day, m.token_tag, m.symbol, m.action,
         count(*) FILTER (WHERE m.moved) AS movements, sum(m.amount) AS volume,
         sum(m.amount_units) AS volume_units, sum(m.fee) AS fees, sum(m.fee_units) AS fees_units
  FROM (
    SELECT token_tag, symbol, action, amount, amount_units, fee, fee_units, ledger_time, true AS moved
    FROM (${MOVEMENTS}) movements
    UNION ALL
    SELECT t.token_tag, k.symbol, t.action, 0, 0, t.fee, ${units('t.fee', 'k.decimals')}, t.ledger_time, false
    FROM ledger_transactions t LEFT JOIN ledger_tokens k ON k.tag = t.token_tag
    WHERE t.action = 'bundle' AND t.fee <> 0
      AND (t.internal_status_code IS DISTINCT FROM 'success'
           OR NOT EXISTS (SELECT 1 FROM ledger_bundle_items b WHERE b.raw_id = t.raw_id AND b.item_index = 0))
  ) m
  WHERE m.ledger_time IS NOT NULL
  GROUP BY 1, m.token_tag, m.symbol, m.action`);

/**
 * Each account's balance per token from the stored records: a mint credits its recipient, a
 * transfer moves its amount, a burn takes it from the sender, a successful bundle moves its
 * items, and the fee of a transfer, burn or bundle (failed bundles included) goes from the sender
 * to the fee recipient. Records count from their first sighting, as the service's balances do.
 */
export const ledgerAccountBalances = pgView('ledger_account_balances', {
  account: text('account').notNull(),
  tokenTag: text('token_tag').notNull(),
  symbol: text('symbol'),
  decimals: integer('decimals'),
  balance: numeric('balance').notNull(),
  balanceUnits: numeric('balance_units').notNull(),
}).as(sql`
  SELECT d.account, d.token_tag, k.symbol, k.decimals, sum(d.delta) AS balance,
         ${units('sum(d.delta)', 'k.decimals')} AS balance_units
  FROM (
    SELECT ${accountKey('t.to_account')} AS account, t.token_tag, t.amount AS delta
    FROM ledger_transactions t WHERE t.action IN ('mint', 'transfer')
    UNION ALL
    SELECT ${accountKey('t.from_account')}, t.token_tag, -t.amount
    FROM ledger_transactions t WHERE t.action IN ('transfer', 'burn')
    UNION ALL
    SELECT ${accountKey('t.from_account')}, t.token_tag, -t.fee
    FROM ledger_transactions t WHERE t.action IN ('transfer', 'burn', 'bundle') AND t.fee <> 0
    UNION ALL
    SELECT ${accountKey('t.fee_recipient')}, t.token_tag, t.fee
    FROM ledger_transactions t WHERE t.action IN ('transfer', 'burn', 'bundle') AND t.fee <> 0
    UNION ALL
    SELECT ${accountKey('b.from_account')}, b.tag, -b.amount
    FROM ledger_bundle_items b JOIN ledger_transactions t ON t.raw_id = b.raw_id
    WHERE t.action = 'bundle' AND t.internal_status_code = 'success'
    UNION ALL
    SELECT ${accountKey('b.to_account')}, b.tag, b.amount
    FROM ledger_bundle_items b JOIN ledger_transactions t ON t.raw_id = b.raw_id
    WHERE t.action = 'bundle' AND t.internal_status_code = 'success'
  ) d
  LEFT JOIN ledger_tokens k ON k.tag = d.token_tag
  GROUP BY d.account, d.token_tag, k.symbol, k.decimals`);

/**
 * Per day (UTC, of the first sighting) and action: how long records took from first sight to
 * `packaged`, from the status history (records first seen already packaged are left out).
 */
export const ledgerStatusLatency = pgView('ledger_status_latency', {
  day: date('day').notNull(),
  action: text('action').notNull(),
  records: bigint('records', { mode: 'number' }).notNull(),
  p50Seconds: doublePrecision('p50_seconds'),
  p95Seconds: doublePrecision('p95_seconds'),
  maxSeconds: doublePrecision('max_seconds'),
}).as(sql`
  SELECT (s.first_seen AT TIME ZONE 'UTC')::date AS day, t.action, count(*) AS records,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY s.seconds) AS p50_seconds,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY s.seconds) AS p95_seconds,
         max(s.seconds) AS max_seconds
  FROM (
    SELECT h.raw_id, min(h.observed_at) AS first_seen,
           extract(epoch FROM min(h.observed_at) FILTER (WHERE h.status = 'packaged') - min(h.observed_at))::float8 AS seconds
    FROM ledger_tx_status_history h
    GROUP BY h.raw_id
    HAVING min(h.observed_at) FILTER (WHERE h.status = 'packaged') > min(h.observed_at)
  ) s
  JOIN ledger_transactions t ON t.raw_id = s.raw_id
  GROUP BY 1, t.action`);
