CREATE TABLE "cancellation_requests" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"notice_key" text NOT NULL,
	"job_id" uuid NOT NULL,
	"notice_type" text NOT NULL,
	"identity" jsonb NOT NULL,
	"subject_id" text NOT NULL,
	"customer_id" text,
	"source" text NOT NULL,
	"code_verified" boolean DEFAULT false NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cancellation_requests_notice_key_unique" UNIQUE("notice_key"),
	CONSTRAINT "cancellation_requests_source_check" CHECK (source in ('recipient_page'))
);
--> statement-breakpoint
CREATE INDEX "cancellation_requests_requested_idx" ON "cancellation_requests" USING btree ("requested_at","id");