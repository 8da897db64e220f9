ALTER TABLE "sync_streams" ADD COLUMN "head_raw_id" bigint;--> statement-breakpoint
ALTER TABLE "sync_streams" ADD COLUMN "head_seen_at" timestamp with time zone;