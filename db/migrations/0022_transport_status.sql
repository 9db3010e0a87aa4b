CREATE TABLE "transport_status" (
	"transport" text PRIMARY KEY NOT NULL,
	"state" text NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"reason" text,
	"error_class" text,
	"code" integer,
	"worker_id" text NOT NULL,
	"checked_at" timestamp with time zone NOT NULL,
	CONSTRAINT "transport_status_transport_check" CHECK (transport in ('smtp', 'twilio')),
	CONSTRAINT "transport_status_state_check" CHECK (state in ('up', 'down')),
	CONSTRAINT "transport_status_reason_check" CHECK (reason is null or reason in ('nothing_left', 'config_broken'))
);
