CREATE VIEW "public"."ledger_account_balances" AS (
  SELECT d.account, d.token_tag, k.symbol, k.decimals, sum(d.delta) AS balance,
         trim_scale(sum(d.delta) * ('1e-' || coalesce(k.decimals, 0))::numeric) AS balance_units
  FROM (
    SELECT CASE WHEN t.to_account ~ '^0x[0-9a-fA-F]{40}$' THEN lower(t.to_account) ELSE t.to_account END AS account, t.token_tag, t.amount AS delta
    FROM ledger_transactions t WHERE t.action IN ('mint', 'transfer')
    UNION ALL
    SELECT CASE WHEN t.from_account ~ '^0x[0-9a-fA-F]{40}$' THEN lower(t.from_account) ELSE t.from_account END, t.token_tag, -t.amount
    FROM ledger_transactions t WHERE t.action IN ('transfer', 'burn')
    UNION ALL
    SELECT CASE WHEN t.from_account ~ '^0x[0-9a-fA-F]{40}$' THEN lower(t.from_account) ELSE t.from_account END, t.token_tag, -t.fee
    FROM ledger_transactions t WHERE t.action IN ('transfer', 'burn', 'bundle') AND t.fee <> 0
    UNION ALL
    SELECT CASE WHEN t.fee_recipient ~ '^0x[0-9a-fA-F]{40}$' THEN lower(t.fee_recipient) ELSE t.fee_recipient END, t.token_tag, t.fee
    FROM ledger_transactions t WHERE t.action IN ('transfer', 'burn', 'bundle') AND t.fee <> 0
    UNION ALL
    SELECT CASE WHEN b.from_account ~ '^0x[0-9a-fA-F]{40}$' THEN lower(b.from_account) ELSE b.from_account END, b.tag, -b.amount
    FROM ledger_bundle_items b JOIN ledger_transactions t ON t.raw_id = b.raw_id
    WHERE t.action = 'bundle' AND t.internal_status_code = 'success'
    UNION ALL
    SELECT CASE WHEN b.to_account ~ '^0x[0-9a-fA-F]{40}$' THEN lower(b.to_account) ELSE b.to_account END, b.tag, b.amount
    FROM ledger_bundle_items b JOIN ledger_transactions t ON t.raw_id = b.raw_id
    WHERE t.action = 'bundle' AND t.internal_status_code = 'success'
  ) d
  LEFT JOIN ledger_tokens k ON k.tag = d.token_tag
  GROUP BY d.account, d.token_tag, k.symbol, k.decimals);--> statement-breakpoint
CREATE VIEW "public"."ledger_daily_volume" AS (
  SELECT (m.ledger_time AT TIME ZONE 'UTC')::date AS day, m.token_tag, m.symbol, m.action,
         count(*) AS movements, sum(m.amount) AS volume, sum(m.amount_units) AS volume_units,
         sum(m.fee) AS fees, sum(m.fee_units) AS fees_units
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
  LEFT JOIN ledger_tokens k ON k.tag = m.token_tag) m
  WHERE m.ledger_time IS NOT NULL
  GROUP BY 1, m.token_tag, m.symbol, m.action);--> statement-breakpoint
CREATE VIEW "public"."ledger_movements" AS (
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
  LEFT JOIN ledger_tokens k ON k.tag = m.token_tag);--> statement-breakpoint
CREATE VIEW "public"."ledger_status_latency" AS (
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
  GROUP BY 1, t.action);