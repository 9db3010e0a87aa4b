import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import type { NoticeOutcome } from './verdict';

/** What a chaos run reads back from the database; the harness's own SQL, read-only. */

export type Progress = { jobs: number; pending: number; claimed: number; youngestClaimAgeMs: number | null };

export async function readProgress(db: Db): Promise<Progress> {
  const result = await db.execute<{ jobs: number; pending: number; claimed: number; youngest: number | null }>(sql`
    select (select count(*)::int from reminder_jobs) as jobs,
           (select count(*)::int from reminder_jobs where state = 'pending') as pending,
           (select count(*)::int from notice_ledger where state = 'claimed') as claimed,
           (select (extract(epoch from now() - max(claimed_at)) * 1000)::float8 from notice_ledger where state = 'claimed') as youngest`);
  const row = result.rows[0];
  return { jobs: row?.jobs ?? 0, pending: row?.pending ?? 0, claimed: row?.claimed ?? 0, youngestClaimAgeMs: row?.youngest ?? null };
}

export async function liveWakeups(db: Db, batchId?: string): Promise<number> {
  const result = await db.execute<{ live: number }>(sql`
    select count(*)::int as live from pgboss.job
    where name = 'notice-wakeup' and state in ('created', 'retry', 'active')
      ${batchId ? sql`and data->>'batchId' = ${batchId}` : sql``}`);
  return result.rows[0]?.live ?? 0;
}

/**
 * Jobs a replay batch's wake-ups have reached (each handled wake-up writes an attempt with its
 * batch id): with RabbitMQ, where the harness cannot list a broker's unacked deliveries, the
 * replay pass has settled when every published wake-up's job has been reached.
 */
export async function jobsWokenByBatch(db: Db, batchId: string): Promise<number> {
  const result = await db.execute<{ woken: number }>(sql`select count(distinct job_id)::int as woken from delivery_attempts where batch_id = ${batchId}`);
  return result.rows[0]?.woken ?? 0;
}

export async function readOutcomes(db: Db, keys: readonly string[]): Promise<NoticeOutcome[]> {
  const result = await db.execute<{
    notice_key: string;
    job_state: string | null;
    suppression_reason: string | null;
    last_error_class: string | null;
    ledger_state: string | null;
    claimed_at: Date | string | null;
    sent_at: Date | string | null;
    window_opens_at: Date | string | null;
    deadline_at: Date | string | null;
  }>(sql`
    select k.key as notice_key, j.state as job_state, j.suppression_reason, j.last_error_class, l.state as ledger_state, l.claimed_at, l.sent_at,
      coalesce(j.window_earliest, j.due_at) as window_opens_at, j.deadline_at
    from unnest(${sql.param(keys)}::text[]) as k(key)
    left join reminder_jobs j on j.notice_key = k.key
    left join notice_ledger l on l.notice_key = k.key`);
  return result.rows.map((row) => ({
    noticeKey: row.notice_key,
    jobState: row.job_state,
    suppressionReason: row.suppression_reason,
    lastErrorClass: row.last_error_class,
    ledgerState: row.ledger_state,
    claimedAt: row.claimed_at === null ? null : new Date(row.claimed_at),
    sentAt: row.sent_at === null ? null : new Date(row.sent_at),
    window: row.window_opens_at === null || row.deadline_at === null ? null : { opensAt: new Date(row.window_opens_at), latest: new Date(row.deadline_at) },
  }));
}

/**
 * Gives a just-created job the window its plan calls for, as the planner would have written it:
 * it opens `opensAfterDueMs` after the due time. Only while nothing has looked at the job yet
 * (due more than half a second from now, no attempt): a window set under a worker's feet would
 * not be the window it decided by. Returns whether it was set.
 */
export async function setWindowOpening(db: Db, { jobId, opensAfterDueMs }: { jobId: string; opensAfterDueMs: number }): Promise<boolean> {
  const result = await db.execute<{ id: string }>(sql`
    update reminder_jobs set window_earliest = due_at + make_interval(secs => ${opensAfterDueMs / 1000}::float8), updated_at = now()
    where id = ${jobId}::uuid and state = 'pending' and due_at > now() + interval '500 milliseconds'
      and due_at + make_interval(secs => ${opensAfterDueMs / 1000}::float8) <= deadline_at
      and not exists (select 1 from delivery_attempts where job_id = ${jobId}::uuid)
    returning id`);
  return result.rows.length > 0;
}

/** Wake-ups that came before their window opened (deferred early, no attempt counted) and after it closed. */
export async function countWindowAttempts(db: Db): Promise<{ early: number; missed: number }> {
  const result = await db.execute<{ early: number; missed: number }>(sql`
    select count(*) filter (where outcome = 'deferred' and detail = 'early')::int as early,
           count(*) filter (where outcome = 'suppressed_policy' and detail = 'window_missed')::int as missed
    from delivery_attempts`);
  return { early: result.rows[0]?.early ?? 0, missed: result.rows[0]?.missed ?? 0 };
}

/** What the send path did, by outcome: redeliveries the ledger refused show as suppressed_duplicate. */
export async function countAttempts(db: Db): Promise<Record<string, number>> {
  const result = await db.execute<{ outcome: string; count: number }>(
    sql`select outcome, count(*)::int as count from delivery_attempts group by outcome order by outcome`,
  );
  return Object.fromEntries(result.rows.map((row) => [row.outcome, row.count]));
}

/**
 * The visibility hazard caught in the act: a second delivery (any worker) refused by the claim
 * (suppressed_duplicate, ledger_claimed) while the first worker's send was still in flight,
 * which then committed `sent`.
 */
export async function countOverlaps(db: Db): Promise<number> {
  const result = await db.execute<{ count: number }>(sql`
    select count(distinct s.job_id)::int as count
    from delivery_attempts s
    join delivery_attempts d on d.job_id = s.job_id and d.outcome = 'suppressed_duplicate' and d.detail = 'ledger_claimed'
      and d.finished_at > s.started_at and d.finished_at < s.finished_at
    where s.outcome = 'sent'`);
  return result.rows[0]?.count ?? 0;
}

export async function countConfirmations(db: Db): Promise<number> {
  const result = await db.execute<{ count: number }>(sql`select count(*)::int as count from audit_log where action = 'ledger.confirm_sent'`);
  return result.rows[0]?.count ?? 0;
}

/** `--provider postmark`: claims the provider reconciler recorded sent from a lookup, and those it left to a person (gave up on). */
export async function countProviderLookups(db: Db): Promise<{ found: number; gaveUp: number }> {
  const result = await db.execute<{ found: number; gave_up: number }>(sql`
    select (select count(distinct notice_key)::int from provider_events where event_id like 'lookup:%') as found,
      (select count(*)::int from provider_lookups where outcome = 'gave_up') as gave_up`);
  return { found: result.rows[0]?.found ?? 0, gaveUp: result.rows[0]?.gave_up ?? 0 };
}
