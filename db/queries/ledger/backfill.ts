import { inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { noticeLedger } from '@/db/schema';

export type BackfillRow = {
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  jobId: string | null;
  sentAt: Date;
  providerMessageId: string | null;
  recipientDomain: string | null;
};

/** Notices already out before the ledger: `sent` rows, source `backfill`. Never overwrites. */
export async function insertBackfilledSent(db: DbOrTx, { rows }: { rows: BackfillRow[] }): Promise<string[]> {
  if (rows.length === 0) return [];
  const inserted = await db
    .insert(noticeLedger)
    .values(
      rows.map((row) => ({
        noticeKey: row.noticeKey,
        noticeType: row.noticeType,
        identity: row.identity,
        revision: row.revision,
        jobId: row.jobId,
        state: 'sent' as const,
        claimedAt: row.sentAt,
        sentAt: row.sentAt,
        providerMessageId: row.providerMessageId,
        recipientDomain: row.recipientDomain,
        source: 'backfill' as const,
      })),
    )
    .onConflictDoNothing({ target: noticeLedger.noticeKey })
    .returning({ noticeKey: noticeLedger.noticeKey });
  return inserted.map((row) => row.noticeKey);
}

/**
 * Backfill from the job table: jobs the pre-ledger pipeline already marked `sent` get a
 * `sent` ledger row (sent_at = the job's last update). `candidates` are the sent jobs with no
 * ledger row yet (at most `limit`), `existing` the sent jobs whose key the ledger already holds
 * (a claim of shadow mode or an earlier backfill). One statement each; idempotent.
 */
export async function backfillSentJobs(
  db: DbOrTx,
  { limit = 10_000, dryRun = false }: { limit?: number; dryRun?: boolean },
): Promise<{ candidates: number; inserted: number; existing: number }> {
  const candidates = sql`
    select j.notice_key, j.notice_type, j.identity, j.revision, j.id, j.updated_at,
           lower(split_part(j.recipient_email, '@', 2)) as domain
    from reminder_jobs j
    where j.state = 'sent' and not exists (select 1 from notice_ledger l where l.notice_key = j.notice_key)
    order by j.updated_at
    limit ${limit}`;
  const existing = sql`select count(distinct j.notice_key)::int from reminder_jobs j
    where j.state = 'sent' and exists (select 1 from notice_ledger l where l.notice_key = j.notice_key)`;
  if (dryRun) {
    const counted = await db.execute<{ candidates: number; existing: number }>(
      sql`select (select count(*) from (${candidates}) c)::int as candidates, (${existing}) as existing`,
    );
    return { candidates: counted.rows[0]?.candidates ?? 0, inserted: 0, existing: counted.rows[0]?.existing ?? 0 };
  }
  // `existing` is counted before the insert (a CTE sees the table as the statement began), so this run's rows are not in it.
  const result = await db.execute<{ candidates: number; inserted: number; existing: number }>(sql`
    with c as (${candidates}),
    ins as (
      insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claimed_at, sent_at, recipient_domain, source, updated_at)
      select notice_key, notice_type, identity, revision, id, 'sent', updated_at, updated_at, domain, 'backfill', now() from c
      on conflict (notice_key) do nothing
      returning notice_key
    )
    select (select count(*) from c)::int as candidates, (select count(*) from ins)::int as inserted, (${existing}) as existing`);
  return result.rows[0] ?? { candidates: 0, inserted: 0, existing: 0 };
}

/** Sent jobs the ledger has no row for: what enforcing now would treat as new (the rollout's gate). */
export async function countSentJobsWithoutLedgerRow(db: DbOrTx): Promise<number> {
  const result = await db.execute<{ count: number }>(sql`
    select count(distinct j.notice_key)::int as count from reminder_jobs j
    where j.state = 'sent' and not exists (select 1 from notice_ledger l where l.notice_key = j.notice_key)`);
  return result.rows[0]?.count ?? 0;
}

/** Which of these keys the ledger already holds (backfill reports them as existing). */
export async function existingNoticeKeys(db: DbOrTx, { keys }: { keys: string[] }): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db.select({ noticeKey: noticeLedger.noticeKey }).from(noticeLedger).where(inArray(noticeLedger.noticeKey, keys));
  return new Set(rows.map((row) => row.noticeKey));
}
