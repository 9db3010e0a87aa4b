CREATE TABLE "evidence_chain" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"entry_id" bigint NOT NULL,
	"prev_hash" text NOT NULL,
	"entry_hash" text NOT NULL,
	CONSTRAINT "evidence_chain_entry_unique" UNIQUE("entry_id")
);
--> statement-breakpoint
CREATE TABLE "evidence_unchained" (
	"entry_id" bigint PRIMARY KEY NOT NULL
);
--> statement-breakpoint
-- The links already made move with their entries; the rest wait for the chainer (db/schema/evidence-record.ts).
INSERT INTO "evidence_chain" ("seq", "entry_id", "prev_hash", "entry_hash") SELECT "seq", "id", "prev_hash", "entry_hash" FROM "evidence_entries" WHERE "seq" IS NOT NULL;--> statement-breakpoint
INSERT INTO "evidence_unchained" ("entry_id") SELECT "id" FROM "evidence_entries" WHERE "seq" IS NULL;--> statement-breakpoint
-- Every entry, whoever writes it, waits in evidence_unchained until the chainer links it: one insert per statement.
CREATE FUNCTION "evidence_entries_unchained"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "evidence_unchained" ("entry_id") SELECT "id" FROM "added";
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "evidence_entries_unchained" AFTER INSERT ON "evidence_entries" REFERENCING NEW TABLE AS "added" FOR EACH STATEMENT EXECUTE FUNCTION "evidence_entries_unchained"();--> statement-breakpoint
ALTER TABLE "evidence_entries" DROP CONSTRAINT "evidence_entries_seq_unique";--> statement-breakpoint
ALTER TABLE "evidence_entries" DROP CONSTRAINT "evidence_entries_chained_whole";--> statement-breakpoint
DROP INDEX "evidence_entries_unchained_idx";--> statement-breakpoint
ALTER TABLE "evidence_entries" DROP COLUMN "seq";--> statement-breakpoint
ALTER TABLE "evidence_entries" DROP COLUMN "prev_hash";--> statement-breakpoint
ALTER TABLE "evidence_entries" DROP COLUMN "entry_hash";