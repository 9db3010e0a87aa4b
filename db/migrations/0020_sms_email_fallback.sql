ALTER TABLE "reminder_jobs" ALTER COLUMN "recipient_email" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "sms_refused_code" text;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD CONSTRAINT "reminder_jobs_email_has_address" CHECK (channel <> 'email' or recipient_email is not null);