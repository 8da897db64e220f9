DROP VIEW "public"."ledger_daily_volume";--> statement-breakpoint
CREATE VIEW "public"."ledger_daily_volume" AS (
  SELECT (m.ledger_time AT TIME ZONE 'UTC')::date AS day, m.token_tag, m.symbol, m.action,
         count(*) FILTER (WHERE m.moved) AS movements, sum(m.amount) AS volume,
         sum(m.amount_units) AS volume_units, sum(m.fee) AS fees, sum(m.fee_units) AS fees_units
  FROM (
    SELECT token_tag, symbol, action, amount, amount_units, fee, fee_units, ledger_time, true AS moved
    FROM (
  SELECT m.raw_id, m.item_index, m.token_tag, k.symbol, k.decimals, m.action, m.from_account, m.to_account,
         m.amount, trim_scale(m.amount * ('1e-' || coalesce(k.decimals, 0))::numeric) AS amount_units,
         m.fee, trim_scale(m.fee * ('1e-' || coalesce(k.decimals, 0))::numeric) AS fee_units,
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
  LEFT JOIN ledger_tokens k ON k.tag = m.token_tag) movements
    UNION ALL
    SELECT t.token_tag, k.symbol, t.action, 0, 0, t.fee, trim_scale(t.fee * ('1e-' || coalesce(k.decimals, 0))::numeric), t.ledger_time, false
    FROM ledger_transactions t LEFT JOIN ledger_tokens k ON k.tag = t.token_tag
    WHERE t.action = 'bundle' AND t.fee <> 0
      AND (t.internal_status_code IS DISTINCT FROM 'success'
           OR NOT EXISTS (SELECT 1 FROM ledger_bundle_items b WHERE b.raw_id = t.raw_id AND b.item_index = 0))
  ) m
  WHERE m.ledger_time IS NOT NULL
  GROUP BY 1, m.token_tag, m.symbol, m.action);