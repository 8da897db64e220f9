CREATE TABLE "backfill_proven_ranges" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"stream_key" text NOT NULL,
	"lo" bigint NOT NULL,
	"hi" bigint NOT NULL,
	"lo_page" integer,
	"backfill_id" text,
	"proven_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "backfill_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"stream_key" text NOT NULL,
	"head_raw_id" bigint NOT NULL,
	"total_pages" integer NOT NULL,
	"status" text NOT NULL,
	"round" integer DEFAULT 0 NOT NULL,
	"gaps" jsonb,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "ledger_bundle_items" (
	"raw_id" bigint NOT NULL,
	"item_index" integer NOT NULL,
	"tag" text NOT NULL,
	"chain_id" text NOT NULL,
	"from_account" text NOT NULL,
	"to_account" text NOT NULL,
	"amount" numeric NOT NULL,
	CONSTRAINT "ledger_bundle_items_raw_id_item_index_pk" PRIMARY KEY("raw_id","item_index")
);
--> statement-breakpoint
CREATE TABLE "ledger_tokens" (
	"tag" text PRIMARY KEY NOT NULL,
	"symbol" text NOT NULL,
	"decimals" integer NOT NULL,
	"chain_type" text NOT NULL,
	"chain_id" text NOT NULL,
	"token_id" text NOT NULL,
	"raw" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"listed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_transactions" (
	"raw_id" bigint PRIMARY KEY NOT NULL,
	"record_id" text NOT NULL,
	"token_symbol" text NOT NULL,
	"action" text NOT NULL,
	"from_account" text NOT NULL,
	"to_account" text NOT NULL,
	"amount" numeric NOT NULL,
	"fee" numeric NOT NULL,
	"fee_recipient" text NOT NULL,
	"nonce" numeric NOT NULL,
	"token_id" text NOT NULL,
	"chain_type" text NOT NULL,
	"chain_id" text NOT NULL,
	"data" text NOT NULL,
	"version" text NOT NULL,
	"sig" text NOT NULL,
	"ledger_hash" text NOT NULL,
	"status" text NOT NULL,
	"internal_status" text NOT NULL,
	"internal_status_code" text,
	"internal_status_json" jsonb,
	"timestamp_ms" bigint NOT NULL,
	"ledger_time" timestamp with time zone,
	"target_chain_tx_hash" text NOT NULL,
	"express_chain_tx_hash" text NOT NULL,
	"express_withdraw_fee" text NOT NULL,
	"express_refund_ledger_hash" text NOT NULL,
	"express_err" text NOT NULL,
	"token_tag" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_tx_conflicts" (
	"fingerprint" text PRIMARY KEY NOT NULL,
	"raw_id" bigint NOT NULL,
	"fields" text[] NOT NULL,
	"stored" jsonb NOT NULL,
	"served" jsonb NOT NULL,
	"stream_key" text,
	"page" integer,
	"run_id" bigint,
	"backfill_id" text,
	"detected_at" timestamp with time zone NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"seen_count" integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_tx_rechecks" (
	"raw_id" bigint PRIMARY KEY NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"pending" text DEFAULT 'status' NOT NULL,
	"unchanged" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_tx_status_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"raw_id" bigint NOT NULL,
	"status" text NOT NULL,
	"internal_status" text NOT NULL,
	"internal_status_code" text,
	"observed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rejected_records" (
	"fingerprint" text PRIMARY KEY NOT NULL,
	"stream_key" text,
	"page" integer,
	"reason" text NOT NULL,
	"raw_text" text NOT NULL,
	"raw_id" bigint,
	"ledger_hash" text,
	"first_seen_at" timestamp with time zone NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"seen_count" integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sync_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"stream_key" text NOT NULL,
	"fence" bigint NOT NULL,
	"owner" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"pages" integer DEFAULT 0 NOT NULL,
	"inserted" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"unchanged" integer DEFAULT 0 NOT NULL,
	"rejected" integer DEFAULT 0 NOT NULL,
	"conflicts" integer DEFAULT 0 NOT NULL,
	"outcome" text NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "sync_schedules" (
	"queue_prefix" text NOT NULL,
	"scheduler_id" text NOT NULL,
	"job_name" text NOT NULL,
	"job_data" jsonb NOT NULL,
	"every_ms" bigint NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sync_schedules_queue_prefix_scheduler_id_pk" PRIMARY KEY("queue_prefix","scheduler_id")
);
--> statement-breakpoint
CREATE TABLE "sync_streams" (
	"key" text PRIMARY KEY NOT NULL,
	"spec" jsonb NOT NULL,
	"walk" jsonb,
	"watermark" bigint,
	"lease_owner" text,
	"lease_fence" bigint DEFAULT 0 NOT NULL,
	"lease_expires_at" timestamp with time zone,
	"lease_ms" integer,
	"last_success_at" timestamp with time zone,
	"last_error_at" timestamp with time zone,
	"error_streak" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_tx_rechecks" ADD CONSTRAINT "ledger_tx_rechecks_raw_id_ledger_transactions_raw_id_fk" FOREIGN KEY ("raw_id") REFERENCES "public"."ledger_transactions"("raw_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sync_runs" ADD CONSTRAINT "sync_runs_stream_key_sync_streams_key_fk" FOREIGN KEY ("stream_key") REFERENCES "public"."sync_streams"("key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "backfill_proven_ranges_stream_idx" ON "backfill_proven_ranges" USING btree ("stream_key","lo");--> statement-breakpoint
CREATE UNIQUE INDEX "backfill_runs_one_running_key" ON "backfill_runs" USING btree ("stream_key") WHERE "backfill_runs"."status" = 'running';--> statement-breakpoint
CREATE INDEX "ledger_bundle_items_tag_idx" ON "ledger_bundle_items" USING btree ("tag");--> statement-breakpoint
CREATE INDEX "ledger_bundle_items_from_idx" ON "ledger_bundle_items" USING btree ("from_account");--> statement-breakpoint
CREATE INDEX "ledger_bundle_items_to_idx" ON "ledger_bundle_items" USING btree ("to_account");--> statement-breakpoint
CREATE INDEX "ledger_tokens_tag_lower_idx" ON "ledger_tokens" USING btree (lower("tag"));--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_ledger_hash_key" ON "ledger_transactions" USING btree ("ledger_hash");--> statement-breakpoint
CREATE INDEX "ledger_transactions_token_time_idx" ON "ledger_transactions" USING btree ("token_tag","ledger_time");--> statement-breakpoint
CREATE INDEX "ledger_transactions_from_idx" ON "ledger_transactions" USING btree ("from_account");--> statement-breakpoint
CREATE INDEX "ledger_transactions_to_idx" ON "ledger_transactions" USING btree ("to_account");--> statement-breakpoint
CREATE INDEX "ledger_transactions_action_time_idx" ON "ledger_transactions" USING btree ("action","ledger_time");--> statement-breakpoint
CREATE INDEX "ledger_transactions_time_idx" ON "ledger_transactions" USING btree ("ledger_time");--> statement-breakpoint
CREATE INDEX "ledger_transactions_non_final_idx" ON "ledger_transactions" USING btree ("raw_id") WHERE "ledger_transactions"."status" <> 'packaged';--> statement-breakpoint
CREATE INDEX "ledger_tx_conflicts_raw_id_idx" ON "ledger_tx_conflicts" USING btree ("raw_id");--> statement-breakpoint
CREATE INDEX "ledger_tx_conflicts_stream_idx" ON "ledger_tx_conflicts" USING btree ("stream_key");--> statement-breakpoint
CREATE INDEX "ledger_tx_rechecks_due_idx" ON "ledger_tx_rechecks" USING btree ("due_at","raw_id");--> statement-breakpoint
CREATE INDEX "ledger_tx_status_history_raw_id_idx" ON "ledger_tx_status_history" USING btree ("raw_id","observed_at");--> statement-breakpoint
CREATE INDEX "rejected_records_raw_id_idx" ON "rejected_records" USING btree ("raw_id");--> statement-breakpoint
CREATE INDEX "rejected_records_seen_idx" ON "rejected_records" USING btree ("seen_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sync_runs_stream_fence_key" ON "sync_runs" USING btree ("stream_key","fence");--> statement-breakpoint
CREATE INDEX "sync_runs_started_idx" ON "sync_runs" USING btree ("started_at");