import type pg from 'pg';

/**
 * Caches of derived figures that a read may refresh (an HTTP GET may cache): the overview's
 * pending-by-due-bucket counts are recounted by whichever request finds them stale, and the
 * overview's chart samples are written by a worker's timer (lib/metrics/overview-writer.ts),
 * whatever request is in flight.
 */
const DERIVED_CACHES = ['pending_due_snapshot', 'overview_samples'];

/**
 * Every table in `public` but the derived caches, each as (row count, md5 of its rows in a
 * stable order). Compared before and after a refused request: "changes nothing" means byte for byte.
 */
export async function snapshotTables(pool: pg.Pool): Promise<Record<string, string>> {
  const tables = await pool.query<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> all($1::text[]) order by 1`,
    [DERIVED_CACHES],
  );
  const parts = tables.rows.map(
    ({ name }) =>
      `select '${name}' as name, count(*)::text || ':' || coalesce(md5(string_agg(t::text, ',' order by t::text)), '-') as sum from public."${name}" t`,
  );
  const result = await pool.query<{ name: string; sum: string }>(parts.join(' union all '));
  const snapshot = Object.fromEntries(result.rows.map((row) => [row.name, row.sum]));
  // Wake-ups published in the same transaction as a job (pg-boss lives in this database).
  const exists = await pool.query<{ present: boolean }>(`select to_regclass('pgboss.job') is not null as present`);
  // Before pg-boss has installed its schema (the console starts it on first use) it holds no wake-up: 0.
  snapshot['pgboss.job'] = '0';
  if (exists.rows[0]?.present) {
    const boss = await pool.query<{ n: string }>(`select count(*)::text as n from pgboss.job`);
    snapshot['pgboss.job'] = boss.rows[0]?.n ?? '-';
  }
  return snapshot;
}
