ALTER TABLE "backfill_runs" ADD COLUMN "floor_raw_id" bigint;--> statement-breakpoint
ALTER TABLE "backfill_runs" ADD COLUMN "gap_floor_raw_id" bigint;