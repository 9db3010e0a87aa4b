import { sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '@/db/client';
import type { DryRunCounts } from '@/db/schema';

/**
 * A replay dry run's lookup for one chunk of DISTINCT uploaded keys: how many the ledger has,
 * by state (the rest are new), and, of the keys the ledger would let through (absent, or
 * released), how many a job stops before any send: `suppressed`, `cancelled`, `failed`, `sent`
 * (a job finished before the ledger knew it), or `past_window` (its deadline_at, the window's
 * latest, has passed: the send path would suppress it `window_missed`).
 *
 * The chunk should be one narrow, sorted range of keys (lib/replay/dry-run.ts cuts them so).
 * `notice_key = any($1)` then lets the primary-key scan step along the leaf pages instead of
 * descending once per key (a few dozen index searches for 30–60 k keys, not one per key), the
 * bitmap heap scan reads each heap page once, in page order, and PostgreSQL's sort of the
 * array finds it already sorted. Against 10 M ledger rows this is ~2 µs per key in one
 * backend, against ~3 µs for a lateral primary-key probe per key (bench/replay-dry-run.ts).
 *
 * Parallel query is switched off for the statement: from ~100 k keys on the planner picks a
 * parallel bitmap scan, and handing the array to the workers costs more than the scan (~1.2 s
 * instead of ~0.1 s per chunk). Outside a transaction each statement gets its own short one
 * for the `set local`; inside a caller's transaction the setting lasts until that transaction
 * ends, and callers must not run two of these at once on it.
 */
export async function countKeysByLedgerStateInRange(db: DbOrTx, { keys }: { keys: readonly string[] }): Promise<DryRunCounts> {
  if (keys.length === 0) return { total: 0, newKeys: 0, existing: {}, blocked: {} };
  const count = async (tx: DbOrTx) => {
    await tx.execute(sql`set local max_parallel_workers_per_gather = 0`);
    // One round trip, two index scans over the same sorted range: the ledger by state, and the
    // jobs that would stop a send the ledger would allow (no ledger row, or a released one).
    const result = await tx.execute<{ kind: 'ledger' | 'blocked'; state: string; count: number }>(sql`
      with input as (select ${textArrayLiteral(keys)}::text[] as keys),
      ledger as (
        select state, count(*)::int as count from notice_ledger where notice_key = any((select keys from input)::text[]) group by state
      ), blocked as (
        select case when j.state in ('suppressed', 'cancelled', 'failed', 'sent') then j.state else 'past_window' end as state, count(*)::int as count
        from reminder_jobs j
        left join notice_ledger l on l.notice_key = j.notice_key
        where j.notice_key = any((select keys from input)::text[])
          and (j.state in ('suppressed', 'cancelled', 'failed', 'sent') or j.deadline_at < now())
          and (l.notice_key is null or l.state = 'released')
        group by 1
      )
      select 'ledger' as kind, state, count from ledger union all select 'blocked' as kind, state, count from blocked`);
    return result.rows;
  };
  const rows = isTransaction(db) ? await count(db) : await db.transaction(count);
  const existing: Record<string, number> = {};
  const blocked: Record<string, number> = {};
  let found = 0;
  for (const row of rows) {
    if (row.kind === 'blocked') {
      blocked[row.state] = row.count;
      continue;
    }
    existing[row.state] = row.count;
    found += row.count;
  }
  return { total: keys.length, newKeys: keys.length - found, existing, blocked };
}

export function isTransaction(db: DbOrTx): boolean {
  return db instanceof PgTransaction;
}

/** `{"a","b"}`: every element double-quoted, quotes and backslashes escaped (PostgreSQL's array input syntax). */
export function textArrayLiteral(values: readonly string[]): string {
  let literal = '{';
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index] ?? '';
    const quoted = value.includes('"') || value.includes('\\') ? value.replace(/["\\]/g, '\\$&') : value;
    literal += index === 0 ? `"${quoted}"` : `,"${quoted}"`;
  }
  return `${literal}}`;
}
