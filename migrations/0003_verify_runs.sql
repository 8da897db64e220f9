CREATE TABLE "verify_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL,
	"complete" boolean NOT NULL,
	"summary" jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "verify_runs_finished_idx" ON "verify_runs" USING btree ("finished_at");--> statement-breakpoint
CREATE INDEX "ledger_transactions_first_seen_idx" ON "ledger_transactions" USING btree ("first_seen_at");