CREATE TABLE "evidence_pieces" (
	"digest" text PRIMARY KEY NOT NULL,
	"texts" text NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL
);
