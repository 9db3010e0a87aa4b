ALTER TABLE "evidence_entries" ALTER COLUMN "body" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "evidence_entries" ADD COLUMN "body_brotli" "bytea";--> statement-breakpoint
ALTER TABLE "evidence_entries" ADD COLUMN "body_hash" text;--> statement-breakpoint
ALTER TABLE "evidence_entries" ADD CONSTRAINT "evidence_entries_one_body" CHECK ((body is null) <> (body_brotli is null) and (body_brotli is null or body_hash is not null));--> statement-breakpoint
-- Compressed by its writer: the server would only try pglz on it again and fail (db/queries/evidence-body.ts).
ALTER TABLE "evidence_entries" ALTER COLUMN "body_brotli" SET STORAGE EXTERNAL;
