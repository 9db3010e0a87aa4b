CREATE TABLE "runtime_controls" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"reason" text NOT NULL,
	"changed_by" text NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "runtime_controls_value_check" CHECK ((name like 'pause:%' and value in ('paused', 'running')) or (name = 'ledger_mode' and value in ('shadow', 'enforce')))
);
