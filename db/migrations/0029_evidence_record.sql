CREATE TABLE "evidence_chain_head" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"seq" bigint DEFAULT 0 NOT NULL,
	"hash" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evidence_chain_head_one_row" CHECK (id = 1)
);
--> statement-breakpoint
CREATE TABLE "evidence_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"notice_key" text NOT NULL,
	"job_id" uuid,
	"kind" text NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"body" text NOT NULL,
	"seq" bigint,
	"prev_hash" text,
	"entry_hash" text,
	CONSTRAINT "evidence_entries_seq_unique" UNIQUE("seq"),
	CONSTRAINT "evidence_entries_chained_whole" CHECK ((seq is null) = (entry_hash is null) and (seq is null) = (prev_hash is null))
);
--> statement-breakpoint
CREATE TABLE "evidence_signed_heads" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"from_seq" bigint NOT NULL,
	"to_seq" bigint NOT NULL,
	"head_hash" text NOT NULL,
	"merkle_root" text NOT NULL,
	"signed_at" timestamp with time zone NOT NULL,
	"kid" text NOT NULL,
	"payload" text NOT NULL,
	"signature" text NOT NULL,
	"timestamp_token" text,
	CONSTRAINT "evidence_signed_heads_to_seq_unique" UNIQUE("to_seq"),
	CONSTRAINT "evidence_signed_heads_range" CHECK (from_seq >= 1 and to_seq >= from_seq)
);
--> statement-breakpoint
CREATE INDEX "evidence_entries_notice_idx" ON "evidence_entries" USING btree ("notice_key","id");--> statement-breakpoint
CREATE INDEX "evidence_entries_unchained_idx" ON "evidence_entries" USING btree ("id") WHERE seq is null;--> statement-breakpoint
CREATE INDEX "evidence_entries_recorded_idx" ON "evidence_entries" USING btree ("recorded_at");