CREATE TABLE "ledger_feed_events" (
	"xid" "xid8" NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "ledger_feed_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"kind" text NOT NULL,
	"raw_id" bigint NOT NULL,
	"action" text NOT NULL,
	"token_tag" text NOT NULL,
	"from_account" text NOT NULL,
	"to_account" text NOT NULL,
	"status" text NOT NULL,
	"internal_status" text NOT NULL,
	"target_chain_tx_hash" text NOT NULL,
	"express_chain_tx_hash" text NOT NULL,
	"express_withdraw_fee" text NOT NULL,
	"express_refund_ledger_hash" text NOT NULL,
	"express_err" text NOT NULL,
	"old" jsonb,
	CONSTRAINT "ledger_feed_events_xid_id_pk" PRIMARY KEY("xid","id")
);
--> statement-breakpoint
CREATE TABLE "ledger_feed_horizon" (
	"id" bigint PRIMARY KEY DEFAULT 1 NOT NULL,
	"retained_after" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_feed_transactions" (
	"xid" "xid8" PRIMARY KEY NOT NULL,
	"first_position" bigint,
	"last_position" bigint,
	"min_event_id" bigint,
	"stamped_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_feed_transactions_last_position_key" ON "ledger_feed_transactions" USING btree ("last_position");--> statement-breakpoint
CREATE INDEX "ledger_feed_transactions_unstamped_idx" ON "ledger_feed_transactions" USING btree ("xid") WHERE "ledger_feed_transactions"."last_position" IS NULL;--> statement-breakpoint
CREATE INDEX "ledger_feed_transactions_stamped_at_idx" ON "ledger_feed_transactions" USING btree ("stamped_at");