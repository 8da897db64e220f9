CREATE TABLE "service_dialects" (
	"list_url" text PRIMARY KEY NOT NULL,
	"paging" text NOT NULL,
	"detected_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "backfill_runs" ADD COLUMN "open_gap" bigint;--> statement-breakpoint
ALTER TABLE "mirrored_service" ADD COLUMN "verified_url" text;--> statement-breakpoint
ALTER TABLE "mirrored_service" ADD COLUMN "verified_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sync_streams" ADD COLUMN "settled_raw_id" bigint;--> statement-breakpoint
ALTER TABLE "sync_streams" ADD COLUMN "settle_pending_raw_id" bigint;--> statement-breakpoint
ALTER TABLE "sync_streams" ADD COLUMN "settle_pending_at" timestamp with time zone;