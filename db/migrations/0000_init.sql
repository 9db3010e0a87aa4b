CREATE TABLE "notice_ledger" (
	"notice_key" text PRIMARY KEY NOT NULL,
	"notice_type" text NOT NULL,
	"identity" jsonb NOT NULL,
	"revision" integer DEFAULT 0 NOT NULL,
	"job_id" uuid,
	"state" text NOT NULL,
	"claim_token" uuid,
	"claimed_by" text,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"provider_message_id" text,
	"recipient_domain" text,
	"one_time_code" text,
	"source" text DEFAULT 'worker' NOT NULL,
	"resolution" text,
	"resolved_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notice_ledger_state_check" CHECK (state in ('claimed', 'sent', 'released', 'suppressed')),
	CONSTRAINT "notice_ledger_sent_has_time" CHECK (state <> 'sent' or sent_at is not null)
);
--> statement-breakpoint
CREATE TABLE "delivery_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" uuid,
	"notice_key" text NOT NULL,
	"worker_id" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone DEFAULT now() NOT NULL,
	"outcome" text NOT NULL,
	"detail" text,
	"error_class" text,
	"queue_message_id" text,
	"batch_id" text,
	"correlation_id" text,
	"claim_to_commit_ms" integer,
	"mode" text DEFAULT 'enforce' NOT NULL,
	CONSTRAINT "delivery_attempts_outcome_check" CHECK (outcome in ('sent', 'deferred', 'discarded', 'suppressed_duplicate', 'would_suppress', 'suppressed_policy', 'retryable_failure', 'permanent_failure', 'unknown'))
);
--> statement-breakpoint
CREATE TABLE "reminder_jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"notice_key" text NOT NULL,
	"notice_type" text NOT NULL,
	"identity" jsonb NOT NULL,
	"revision" integer DEFAULT 0 NOT NULL,
	"subject_id" text NOT NULL,
	"customer_id" text,
	"recipient_email" text NOT NULL,
	"recipient_time_zone" text DEFAULT 'UTC' NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"deadline_at" timestamp with time zone NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"suppression_reason" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"last_error_class" text,
	"wakeup_published_at" timestamp with time zone,
	"evidence_ref" text,
	"source" text NOT NULL,
	"batch_id" text,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reminder_jobs_notice_key_unique" UNIQUE("notice_key"),
	CONSTRAINT "reminder_jobs_state_check" CHECK (state in ('pending', 'claimed', 'sent', 'suppressed', 'failed', 'cancelled')),
	CONSTRAINT "reminder_jobs_deadline_after_due" CHECK (deadline_at >= due_at),
	CONSTRAINT "reminder_jobs_attempts_nonnegative" CHECK (attempts >= 0)
);
--> statement-breakpoint
CREATE TABLE "evidence" (
	"ref" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"summary" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"opened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	CONSTRAINT "evidence_state_check" CHECK (state in ('open', 'resolved'))
);
--> statement-breakpoint
CREATE TABLE "provider_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"raw_type" text NOT NULL,
	"correlation_id" text,
	"provider_message_id" text,
	"notice_key" text,
	"recipient" text,
	"bounce_type" text,
	"occurred_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "provider_events_provider_event_unique" UNIQUE("provider","event_id"),
	CONSTRAINT "provider_events_type_check" CHECK (event_type in ('accepted', 'delivered', 'deferred', 'bounce', 'soft_bounce', 'complaint', 'dropped', 'other'))
);
--> statement-breakpoint
CREATE TABLE "recipient_suppressions" (
	"email" text PRIMARY KEY NOT NULL,
	"reason" text NOT NULL,
	"source_event_id" text,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recipient_suppressions_reason_check" CHECK (reason in ('hard_bounce', 'complaint', 'unsubscribed', 'manual')),
	CONSTRAINT "recipient_suppressions_lowercase" CHECK (email = lower(email))
);
--> statement-breakpoint
CREATE TABLE "replays" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"batch_id" text NOT NULL,
	"state" text DEFAULT 'requested' NOT NULL,
	"filter" jsonb NOT NULL,
	"dry_run" jsonb,
	"requested_by" uuid NOT NULL,
	"request_reason" text NOT NULL,
	"decided_by" uuid,
	"decision_reason" text,
	"total" integer DEFAULT 0 NOT NULL,
	"published" integer DEFAULT 0 NOT NULL,
	"suppressed" integer DEFAULT 0 NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "replays_batch_id_unique" UNIQUE("batch_id"),
	CONSTRAINT "replays_state_check" CHECK (state in ('requested', 'approved', 'rejected', 'running', 'completed', 'cancelled', 'failed')),
	CONSTRAINT "replays_four_eyes" CHECK (decided_by is null or decided_by <> requested_by)
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_tokens_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"password_hash" text,
	"failed_logins" integer DEFAULT 0 NOT NULL,
	"locked_until" timestamp with time zone,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_login_at" timestamp with time zone,
	CONSTRAINT "users_email_unique" UNIQUE("email"),
	CONSTRAINT "users_role_check" CHECK (role in ('support', 'oncall', 'operator', 'manager', 'admin')),
	CONSTRAINT "users_email_lowercase" CHECK (email = lower(email))
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"reason" text NOT NULL,
	"before" jsonb,
	"after" jsonb
);
--> statement-breakpoint
CREATE INDEX "notice_ledger_claimed_idx" ON "notice_ledger" USING btree ("claimed_at") WHERE state = 'claimed';--> statement-breakpoint
CREATE INDEX "notice_ledger_provider_message_id_idx" ON "notice_ledger" USING btree ("provider_message_id") WHERE provider_message_id is not null;--> statement-breakpoint
CREATE INDEX "notice_ledger_job_id_idx" ON "notice_ledger" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "delivery_attempts_job_idx" ON "delivery_attempts" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "delivery_attempts_notice_key_idx" ON "delivery_attempts" USING btree ("notice_key");--> statement-breakpoint
CREATE INDEX "delivery_attempts_started_idx" ON "delivery_attempts" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "delivery_attempts_batch_idx" ON "delivery_attempts" USING btree ("batch_id") WHERE batch_id is not null;--> statement-breakpoint
CREATE INDEX "reminder_jobs_pending_idx" ON "reminder_jobs" USING btree ("next_attempt_at") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "reminder_jobs_pending_due_idx" ON "reminder_jobs" USING btree ("notice_type","due_at") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "reminder_jobs_email_idx" ON "reminder_jobs" USING btree (lower("recipient_email"));--> statement-breakpoint
CREATE INDEX "reminder_jobs_subject_idx" ON "reminder_jobs" USING btree ("subject_id");--> statement-breakpoint
CREATE INDEX "reminder_jobs_customer_idx" ON "reminder_jobs" USING btree ("customer_id") WHERE customer_id is not null;--> statement-breakpoint
CREATE INDEX "reminder_jobs_batch_idx" ON "reminder_jobs" USING btree ("batch_id") WHERE batch_id is not null;--> statement-breakpoint
CREATE INDEX "reminder_jobs_evidence_idx" ON "reminder_jobs" USING btree ("evidence_ref") WHERE evidence_ref is not null;--> statement-breakpoint
CREATE INDEX "provider_events_notice_key_idx" ON "provider_events" USING btree ("notice_key") WHERE notice_key is not null;--> statement-breakpoint
CREATE INDEX "provider_events_correlation_idx" ON "provider_events" USING btree ("correlation_id") WHERE correlation_id is not null;--> statement-breakpoint
CREATE INDEX "provider_events_provider_message_idx" ON "provider_events" USING btree ("provider_message_id") WHERE provider_message_id is not null;--> statement-breakpoint
CREATE INDEX "provider_events_received_idx" ON "provider_events" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "replays_requested_at_idx" ON "replays" USING btree ("requested_at");--> statement-breakpoint
CREATE INDEX "api_tokens_created_idx" ON "api_tokens" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "audit_log_target_idx" ON "audit_log" USING btree ("target_id");--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor","at");