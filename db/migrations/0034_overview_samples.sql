CREATE TABLE "overview_samples" (
	"at" timestamp with time zone NOT NULL,
	"series" text NOT NULL,
	"key" text DEFAULT '' NOT NULL,
	"value" double precision NOT NULL,
	CONSTRAINT "overview_samples_at_series_key_pk" PRIMARY KEY("at","series","key")
);
