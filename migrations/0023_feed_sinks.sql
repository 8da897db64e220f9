CREATE TABLE "feed_sink_dead_letters" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "feed_sink_dead_letters_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"sink" text NOT NULL,
	"first_position" bigint NOT NULL,
	"last_position" bigint NOT NULL,
	"events" integer,
	"body" text,
	"reason" text NOT NULL,
	"attempts" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "feed_sinks" (
	"name" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"filter" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"position" bigint DEFAULT 0 NOT NULL,
	"delivered_events" bigint DEFAULT 0 NOT NULL,
	"delivered_at" timestamp with time zone,
	"last_error" text,
	"last_error_at" timestamp with time zone,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "feed_sink_dead_letters" ADD CONSTRAINT "feed_sink_dead_letters_sink_feed_sinks_name_fk" FOREIGN KEY ("sink") REFERENCES "public"."feed_sinks"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "feed_sink_dead_letters_sink_idx" ON "feed_sink_dead_letters" USING btree ("sink","id");