CREATE TABLE "pending_due_snapshot" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"counted_at" timestamp with time zone NOT NULL,
	"count_ms" integer NOT NULL,
	"counts" jsonb NOT NULL,
	CONSTRAINT "pending_due_snapshot_one_row" CHECK (id)
);
