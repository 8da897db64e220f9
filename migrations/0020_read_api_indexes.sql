CREATE INDEX "ledger_bundle_items_from_lower_idx" ON "ledger_bundle_items" USING btree (lower("from_account"));--> statement-breakpoint
CREATE INDEX "ledger_bundle_items_to_lower_idx" ON "ledger_bundle_items" USING btree (lower("to_account"));--> statement-breakpoint
CREATE INDEX "ledger_transactions_from_lower_idx" ON "ledger_transactions" USING btree (lower("from_account"));--> statement-breakpoint
CREATE INDEX "ledger_transactions_to_lower_idx" ON "ledger_transactions" USING btree (lower("to_account"));--> statement-breakpoint
CREATE INDEX "ledger_transactions_fee_recipient_lower_idx" ON "ledger_transactions" USING btree (lower("fee_recipient"));--> statement-breakpoint
CREATE INDEX "ledger_transactions_mint_chain_hash_idx" ON "ledger_transactions" USING btree ("target_chain_tx_hash") WHERE "ledger_transactions"."action" = 'mint';