ALTER TABLE "ledger_transactions" ADD COLUMN "hash_check" text;--> statement-breakpoint
ALTER TABLE "ledger_transactions" ADD COLUMN "signature_check" text;