CREATE TABLE "provider_lookups" (
	"notice_key" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"outcome" text NOT NULL,
	"checks" integer DEFAULT 1 NOT NULL,
	"first_checked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_checked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"detail" text,
	CONSTRAINT "provider_lookups_outcome_check" CHECK (outcome in ('not_found', 'lookup_failed', 'gave_up', 'found'))
);
--> statement-breakpoint
CREATE INDEX "provider_lookups_checked_idx" ON "provider_lookups" USING btree ("last_checked_at");