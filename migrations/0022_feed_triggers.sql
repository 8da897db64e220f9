-- The change feed's events, written by the database in the transaction that writes the rows, so
-- every writer (multi-row upserts, COPY, re-reads) is covered. Statement-level triggers with
-- transition tables: one INSERT … SELECT per statement, never one per row. Each transaction that
-- wrote events gets one unstamped row in ledger_feed_transactions and one notification (the
-- identical ones of a transaction are folded into one at commit).
INSERT INTO "ledger_feed_horizon" ("id", "retained_after") VALUES (1, 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE FUNCTION ledger_feed_mark(written bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF written > 0 THEN
    INSERT INTO ledger_feed_transactions (xid) VALUES (pg_current_xact_id()) ON CONFLICT (xid) DO NOTHING;
    PERFORM pg_notify('ledger_feed_commit', '');
  END IF;
END $$;
--> statement-breakpoint
CREATE FUNCTION ledger_feed_stored() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written bigint;
BEGIN
  INSERT INTO ledger_feed_events (xid, kind, raw_id, action, token_tag, from_account, to_account, status,
    internal_status, target_chain_tx_hash, express_chain_tx_hash, express_withdraw_fee, express_refund_ledger_hash,
    express_err)
  SELECT pg_current_xact_id(), 'stored', n.raw_id, n.action, n.token_tag, n.from_account, n.to_account, n.status,
    n.internal_status, n.target_chain_tx_hash, n.express_chain_tx_hash, n.express_withdraw_fee,
    n.express_refund_ledger_hash, n.express_err
  FROM ledger_feed_new_rows n;
  GET DIAGNOSTICS written = ROW_COUNT;
  PERFORM ledger_feed_mark(written);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Only rows whose tracked fields differ: a re-read that rewrites other columns is no event. The
-- values before are kept for the fields that differ only (a JSON object built for few rows).
CREATE FUNCTION ledger_feed_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written bigint;
BEGIN
  INSERT INTO ledger_feed_events (xid, kind, raw_id, action, token_tag, from_account, to_account, status,
    internal_status, target_chain_tx_hash, express_chain_tx_hash, express_withdraw_fee, express_refund_ledger_hash,
    express_err, old)
  SELECT pg_current_xact_id(), 'changed', n.raw_id, n.action, n.token_tag, n.from_account, n.to_account, n.status,
    n.internal_status, n.target_chain_tx_hash, n.express_chain_tx_hash, n.express_withdraw_fee,
    n.express_refund_ledger_hash, n.express_err,
    jsonb_strip_nulls(jsonb_build_object(
      'status', CASE WHEN o.status <> n.status THEN to_jsonb(o.status) END,
      'internalStatus', CASE WHEN o.internal_status <> n.internal_status THEN to_jsonb(o.internal_status) END,
      'targetChainTxHash', CASE WHEN o.target_chain_tx_hash <> n.target_chain_tx_hash
        THEN to_jsonb(o.target_chain_tx_hash) END,
      'express', CASE WHEN (o.express_chain_tx_hash, o.express_withdraw_fee, o.express_refund_ledger_hash, o.express_err)
          <> (n.express_chain_tx_hash, n.express_withdraw_fee, n.express_refund_ledger_hash, n.express_err)
        THEN jsonb_build_object('chainTxHash', o.express_chain_tx_hash, 'withdrawFee', o.express_withdraw_fee,
          'refundLedgerHash', o.express_refund_ledger_hash, 'err', o.express_err) END))
  FROM ledger_feed_new_rows n
  JOIN ledger_feed_old_rows o ON o.raw_id = n.raw_id
  WHERE (o.status, o.internal_status, o.target_chain_tx_hash,
         o.express_chain_tx_hash, o.express_withdraw_fee, o.express_refund_ledger_hash, o.express_err)
     <> (n.status, n.internal_status, n.target_chain_tx_hash,
         n.express_chain_tx_hash, n.express_withdraw_fee, n.express_refund_ledger_hash, n.express_err);
  GET DIAGNOSTICS written = ROW_COUNT;
  PERFORM ledger_feed_mark(written);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER ledger_feed_stored_trigger AFTER INSERT ON ledger_transactions
  REFERENCING NEW TABLE AS ledger_feed_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_feed_stored();
--> statement-breakpoint
CREATE TRIGGER ledger_feed_changed_trigger AFTER UPDATE ON ledger_transactions
  REFERENCING OLD TABLE AS ledger_feed_old_rows NEW TABLE AS ledger_feed_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_feed_changed();
