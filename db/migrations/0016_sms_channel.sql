CREATE TABLE "sms_messages" (
	"message_sid" text PRIMARY KEY NOT NULL,
	"correlation_id" text,
	"notice_key" text,
	"status" text NOT NULL,
	"status_rank" smallint NOT NULL,
	"error_code" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_messages_status_check" CHECK (status in ('accepted', 'scheduled', 'queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'canceled', 'read'))
);
--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "channel" text DEFAULT 'email' NOT NULL;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD COLUMN "recipient_phone" text;--> statement-breakpoint
CREATE INDEX "sms_messages_notice_key_idx" ON "sms_messages" USING btree ("notice_key") WHERE notice_key is not null;--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD CONSTRAINT "reminder_jobs_channel_check" CHECK (channel in ('email', 'sms'));--> statement-breakpoint
ALTER TABLE "reminder_jobs" ADD CONSTRAINT "reminder_jobs_sms_has_phone" CHECK (channel <> 'sms' or recipient_phone is not null);