CREATE TABLE "template_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"template_id" text NOT NULL,
	"channel" text NOT NULL,
	"locale" text NOT NULL,
	"content" jsonb NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "notice_ledger" ADD COLUMN "template_version_id" text;