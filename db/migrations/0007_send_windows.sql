CREATE TABLE "business_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"type" text NOT NULL,
	"identity" jsonb NOT NULL,
	"revision" integer DEFAULT 0 NOT NULL,
	"body_sha256" text NOT NULL,
	"anchor_at" timestamp with time zone NOT NULL,
	"region" text NOT NULL,
	"time_zone" text NOT NULL,
	"recipient" jsonb NOT NULL,
	"contract" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"rule_set_version" text NOT NULL,
	"source" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "business_events_fact_unique" UNIQUE("type","identity","revision"),
	CONSTRAINT "business_events_revision_nonnegative" CHECK (revision >= 0)
);
--> statement-breakpoint
CREATE TABLE "unplanned_notices" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"notice_type" text NOT NULL,
	"category" text NOT NULL,
	"reason" text NOT NULL,
	"detail" text,
	"rule_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"rule_set_version" text NOT NULL,
	"region" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	"resolution" text,
	CONSTRAINT "unplanned_notices_category_check" CHECK (category in ('required', 'courtesy'))
);
--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "window_earliest" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "category" text DEFAULT 'courtesy' NOT NULL;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "region" text;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "rule_ids" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "rule_set_version" text;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "event_id" uuid;--> statement-breakpoint
ALTER TABLE "unplanned_notices" ADD CONSTRAINT "unplanned_notices_event_id_business_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."business_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "unplanned_notices_open_idx" ON "unplanned_notices" USING btree ("created_at") WHERE resolved_at is null;--> statement-breakpoint
CREATE INDEX "unplanned_notices_event_idx" ON "unplanned_notices" USING btree ("event_id");--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD CONSTRAINT "reminder_jobs_event_id_business_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."business_events"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "reminder_jobs_event_idx" ON "reminder_jobs" USING btree ("event_id") WHERE event_id is not null;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD CONSTRAINT "reminder_jobs_window_ordered" CHECK (window_earliest is null or window_earliest <= deadline_at);--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD CONSTRAINT "reminder_jobs_category_check" CHECK (category in ('required', 'courtesy'));