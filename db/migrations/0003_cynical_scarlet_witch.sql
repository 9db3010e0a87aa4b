DROP INDEX "delivery_attempts_started_idx";--> statement-breakpoint
CREATE INDEX "delivery_attempts_started_idx" ON "delivery_attempts" USING btree ("started_at","outcome","claim_to_commit_ms");