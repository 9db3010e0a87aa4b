ALTER TABLE "reminder_jobs" ADD COLUMN "recipient_locale" text;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "anchor_at" timestamp with time zone;