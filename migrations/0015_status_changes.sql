ALTER TABLE "ledger_transactions" ADD COLUMN "status_changes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The changes stored before the count existed: every history row of a record after its first.
UPDATE "ledger_transactions" t SET "status_changes" = h.n - 1
FROM (
  SELECT raw_id, count(*)::int AS n FROM "ledger_tx_status_history" GROUP BY raw_id HAVING count(*) > 1
) h
WHERE t.raw_id = h.raw_id;
