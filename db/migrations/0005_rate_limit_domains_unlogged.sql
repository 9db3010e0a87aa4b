-- The per-recipient-domain token buckets (lib/jobs/rate-limit.ts, rate-limiter-flexible's
-- table layout). Created here rather than by the library at run time, and UNLOGGED: a bucket
-- is a one-second counter, so it needs no WAL and no flush on commit (it was the worker's most
-- waited-on statement, LWLock:WALWrite, in bench/worker-e2e.ts). After a server crash the
-- buckets start empty, which allows at most one extra window's worth of sends per domain.
CREATE UNLOGGED TABLE IF NOT EXISTS "rate_limit_domains" (
  "key" varchar(255) PRIMARY KEY,
  "points" integer NOT NULL DEFAULT 0,
  "expire" bigint
);
--> statement-breakpoint
-- Deployments where the library created it as a logged table.
ALTER TABLE "rate_limit_domains" SET UNLOGGED;
