-- An exact account id is looked up by two conditions, `lower(col) = lower(id) AND col = id`
-- (through the lower-case index, which also finds EVM addresses in any case). Taken for
-- independent, they made an account of 33,775 records among 1,000,000 look like 749: its page of
-- the read API was read whole by bitmaps and sorted (0.9 s) rather than found by walking the
-- rawIds (22 ms). These statistics tell the planner that the id decides its lower case; ANALYZE
-- fills them, at no cost it could measure (1.7 s for 1,000,000 records either way).
CREATE STATISTICS IF NOT EXISTS "ledger_transactions_from_account_stats" (dependencies)
  ON "from_account", lower("from_account") FROM "ledger_transactions";
--> statement-breakpoint
CREATE STATISTICS IF NOT EXISTS "ledger_transactions_to_account_stats" (dependencies)
  ON "to_account", lower("to_account") FROM "ledger_transactions";
