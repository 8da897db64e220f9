CREATE TABLE "mirrored_service" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"anchor_raw_id" bigint NOT NULL,
	"anchor_ledger_hash" text NOT NULL,
	"service_url" text NOT NULL,
	"pinned_at" timestamp with time zone NOT NULL
);
