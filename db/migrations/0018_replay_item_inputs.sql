ALTER TABLE "replay_items" ADD COLUMN "anchor_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "replay_items" ADD COLUMN "recipient_locale" text;--> statement-breakpoint
ALTER TABLE "replay_items" ADD COLUMN "recipient_phone" text;--> statement-breakpoint
ALTER TABLE "replay_items" ADD COLUMN "channel" text;