ALTER TABLE "sync_runs" ADD COLUMN "paging" text;--> statement-breakpoint
ALTER TABLE "sync_runs" ADD COLUMN "key_count" integer;