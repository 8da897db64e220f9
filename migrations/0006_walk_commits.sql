CREATE TABLE "sync_walk_commits" (
	"stream_key" text NOT NULL,
	"fence" bigint NOT NULL,
	"attempt" text NOT NULL,
	"from_page" integer NOT NULL,
	"walk" jsonb NOT NULL,
	"pages" integer NOT NULL,
	"inserted" integer NOT NULL,
	"updated" integer NOT NULL,
	"unchanged" integer NOT NULL,
	"rejected" integer NOT NULL,
	"conflicts" integer NOT NULL,
	"committed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sync_walk_commits_stream_key_fence_attempt_from_page_pk" PRIMARY KEY("stream_key","fence","attempt","from_page")
);
--> statement-breakpoint
ALTER TABLE "sync_walk_commits" ADD CONSTRAINT "sync_walk_commits_stream_key_sync_streams_key_fk" FOREIGN KEY ("stream_key") REFERENCES "public"."sync_streams"("key") ON DELETE cascade ON UPDATE no action;