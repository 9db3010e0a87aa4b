CREATE TABLE "replay_items" (
	"replay_id" uuid NOT NULL,
	"notice_key" text NOT NULL,
	"line" integer,
	"job_id" uuid,
	"notice_type" text,
	"identity" jsonb,
	"revision" integer,
	"recipient_email" text,
	"recipient_time_zone" text,
	"customer_id" text,
	"due_at" timestamp with time zone,
	"deadline_at" timestamp with time zone,
	"evidence_ref" text,
	"payload" jsonb,
	"published_at" timestamp with time zone,
	CONSTRAINT "replay_items_pkey" PRIMARY KEY("replay_id","notice_key")
);
--> statement-breakpoint
ALTER TABLE "replays" ADD COLUMN "upload_rejections" jsonb;--> statement-breakpoint
ALTER TABLE "replay_items" ADD CONSTRAINT "replay_items_replay_id_replays_id_fk" FOREIGN KEY ("replay_id") REFERENCES "public"."replays"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "replay_items_unpublished_idx" ON "replay_items" USING btree ("replay_id","notice_key") WHERE published_at is null;