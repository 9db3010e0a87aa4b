CREATE TABLE "recipient_preference_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"recipient" text NOT NULL,
	"category" text NOT NULL,
	"channel" text NOT NULL,
	"from_state" text,
	"to_state" text NOT NULL,
	"source" text NOT NULL,
	"actor" text,
	"reason" text,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recipient_preference_changes_source_check" CHECK (source in ('one_click', 'recipient_page', 'provider_event', 'sms_keyword', 'producer_api', 'support'))
);
--> statement-breakpoint
CREATE TABLE "recipient_preferences" (
	"recipient" text NOT NULL,
	"category" text NOT NULL,
	"channel" text NOT NULL,
	"state" text NOT NULL,
	"source" text NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recipient_preferences_recipient_category_channel_pk" PRIMARY KEY("recipient","category","channel"),
	CONSTRAINT "recipient_preferences_state_check" CHECK (state in ('opted_in', 'opted_out', 'required')),
	CONSTRAINT "recipient_preferences_source_check" CHECK (source in ('one_click', 'recipient_page', 'provider_event', 'sms_keyword', 'producer_api', 'support')),
	CONSTRAINT "recipient_preferences_channel_check" CHECK (channel in ('email', 'sms')),
	CONSTRAINT "recipient_preferences_required_check" CHECK ((category = 'required') = (state = 'required')),
	CONSTRAINT "recipient_preferences_email_lowercase" CHECK (channel <> 'email' or recipient = lower(recipient))
);
--> statement-breakpoint
CREATE INDEX "recipient_preference_changes_recipient_idx" ON "recipient_preference_changes" USING btree ("recipient","changed_at");