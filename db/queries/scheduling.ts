import type { Channel } from '@/db/schema/states';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { reminderJobs, type JobRow } from '@/db/schema/jobs';
import { isUuid } from '@/db/uuid';

export type NewJob = {
  noticeKey: string;
  noticeType: string;
  identity: Record<string, string>;
  revision: number;
  subjectId: string;
  customerId: string | null;
  /** Null only for an `sms` job (check reminder_jobs_email_has_address). */
  recipientEmail: string | null;
  recipientTimeZone: string;
  /** Default `email`; an `sms` job carries the E.164 phone. */
  channel?: Channel;
  recipientPhone?: string | null;
  dueAt: Date;
  deadlineAt: Date;
  evidenceRef: string | null;
  source: string;
  batchId: string | null;
  payload: Record<string, unknown>;
  /** Set when the wake-up is published in the same transaction (pg-boss). */
  wakeupPublishedAt: Date | null;
  /** The planned window's earliest instant (deadlineAt is its latest); null: opens at dueAt. */
  windowEarliest?: Date | null;
  category?: 'required' | 'courtesy';
  region?: string | null;
  ruleIds?: string[];
  ruleSetVersion?: string | null;
  /** The business event that planned it (POST /api/v1/events). */
  eventId?: string | null;
  /** The scheduling span's W3C traceparent (lib/telemetry/tracing.ts currentTraceparent). */
  traceparent?: string | null;
  /** The recipient's BCP 47 locale (templates) and the notice's anchor (the charge date it shows). */
  recipientLocale?: string | null;
  anchorAt?: Date | null;
};

/**
 * The one statement that makes job rows (test/one-insert-path.test.ts): each job unless its notice
 * key already has one, or an earlier job in the list has it; `created` says which, in the order
 * given. A producer's single request is a list of one, a batch is one statement per chunk. The
 * rows go in notice-key order, so two batches that share keys wait for each other (the unique
 * index) instead of deadlocking.
 */
export async function insertJobsUnlessExist(db: DbOrTx, jobs: NewJob[]): Promise<{ job: JobRow; created: boolean }[]> {
  if (jobs.length === 0) return [];
  const firsts = new Map<string, NewJob>();
  for (const job of jobs) if (!firsts.has(job.noticeKey)) firsts.set(job.noticeKey, job);
  const rows = [...firsts.values()].sort((a, b) => (a.noticeKey < b.noticeKey ? -1 : a.noticeKey > b.noticeKey ? 1 : 0));
  const inserted = await db
    .insert(reminderJobs)
    .values(rows.map((job) => ({ ...job, state: 'pending' as const, nextAttemptAt: job.dueAt })))
    .onConflictDoNothing({ target: reminderJobs.noticeKey })
    .returning();
  const created = new Map(inserted.map((row) => [row.noticeKey, row]));
  const taken = [...firsts.keys()].filter((key) => !created.has(key));
  const existing = new Map((await findJobsByNoticeKeys(db, { noticeKeys: taken })).map((row) => [row.noticeKey, row]));
  const answered = new Set<string>();
  return jobs.map((job) => {
    const first = !answered.has(job.noticeKey);
    answered.add(job.noticeKey);
    const mine = created.get(job.noticeKey);
    if (mine) return { job: mine, created: first };
    const theirs = existing.get(job.noticeKey);
    if (!theirs) throw new Error('notice key conflicted but no job found');
    return { job: theirs, created: false };
  });
}

/** A list of one for insertJobsUnlessExist: fixtures and tests (production goes through enqueueNotices). */
export async function insertJobUnlessExists(db: DbOrTx, job: NewJob): Promise<{ job: JobRow; created: boolean }> {
  const [result] = await insertJobsUnlessExist(db, [job]);
  if (!result) throw new Error('insertJobsUnlessExist answered nothing for one job');
  return result;
}

/** The jobs already holding any of these keys (the batch form of findJobByNoticeKey). */
export async function findJobsByNoticeKeys(db: DbOrTx, { noticeKeys }: { noticeKeys: string[] }): Promise<JobRow[]> {
  if (noticeKeys.length === 0) return [];
  return db.select().from(reminderJobs).where(inArray(reminderJobs.noticeKey, noticeKeys));
}

export async function findJobByNoticeKey(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<JobRow | null> {
  const [row] = await db.select().from(reminderJobs).where(eq(reminderJobs.noticeKey, noticeKey)).limit(1);
  return row ?? null;
}

export async function lockJobById(db: DbOrTx, { id }: { id: string }): Promise<JobRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await db.select().from(reminderJobs).where(eq(reminderJobs.id, id)).for('update').limit(1);
  return row ?? null;
}

/** Cancels a pending job; null when it is not pending (any more). */
export async function cancelPendingJob(db: DbOrTx, { id, now }: { id: string; now: Date }): Promise<JobRow | null> {
  const [row] = await db
    .update(reminderJobs)
    .set({ state: 'cancelled', updatedAt: now })
    .where(and(eq(reminderJobs.id, id), eq(reminderJobs.state, 'pending')))
    .returning();
  return row ?? null;
}

/** Pending reminders about this evidence become suppressed before any send. */
export async function suppressPendingJobsForEvidence(db: DbOrTx, { evidenceRef, now }: { evidenceRef: string; now: Date }): Promise<string[]> {
  const rows = await db
    .update(reminderJobs)
    .set({ state: 'suppressed', suppressionReason: 'evidence_resolved', updatedAt: now })
    .where(and(eq(reminderJobs.evidenceRef, evidenceRef), eq(reminderJobs.state, 'pending')))
    .returning({ id: reminderJobs.id });
  return rows.map((row) => row.id);
}

/** Marks each row woken at its own instant (the wake-up its enqueue recorded), in one statement. */
export async function markWakeupsPublished(db: DbOrTx, marks: { id: string; at: Date }[]): Promise<void> {
  if (marks.length === 0) return;
  await db.execute(sql`
    update reminder_jobs job set wakeup_published_at = mark.at
    from unnest(${sql.param(marks.map((mark) => mark.id))}::uuid[], ${sql.param(marks.map((mark) => mark.at.toISOString()))}::timestamptz[]) as mark(id, at)
    where job.id = mark.id`);
}

export type WakeupTarget = { id: string; batchId: string | null };

/**
 * Pending, due jobs whose last wake-up is older than `staleBefore` and whose due time is too:
 * a live wake-up would have been handled within the visibility window. Marks them published
 * at `now` and returns them; `skip locked` lets every worker sweep at once without waiting.
 */
export async function takeStaleWakeups(db: DbOrTx, { now, staleBefore, limit }: { now: Date; staleBefore: Date; limit: number }): Promise<WakeupTarget[]> {
  const result = await db.execute<{ id: string; batch_id: string | null }>(sql`
    update reminder_jobs set wakeup_published_at = ${now}
    where id in (
      select id from reminder_jobs
      where state = 'pending'
        and next_attempt_at <= ${staleBefore}
        and (wakeup_published_at is null or wakeup_published_at <= ${staleBefore})
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    returning id, batch_id`);
  return result.rows.map((row) => ({ id: row.id, batchId: row.batch_id }));
}

/** `woken`: the row had a wake-up recorded before (for an earlier due time), which the queue may still hold. */
export type DueTarget = WakeupTarget & { nextAttemptAt: Date; woken: boolean };

/**
 * Pending jobs due by `until` (now + the queue's horizon; now itself for a broker without
 * delays) that have no wake-up recorded for their current next_attempt_at. Marks each woken at
 * the later of `now` and its due time (the instant its wake-up becomes deliverable, which is
 * what the sweeper's grace counts from) and returns them; `skip locked` as for the sweeper.
 */
export async function takeDueUndispatched(db: DbOrTx, { now, until, limit }: { now: Date; until: Date; limit: number }): Promise<DueTarget[]> {
  const result = await db.execute<{ id: string; batch_id: string | null; next_attempt_at: string | Date; woken: boolean }>(sql`
    with due as (
      select id, wakeup_published_at is not null as woken from reminder_jobs
      where state = 'pending'
        and next_attempt_at <= ${until}
        and (wakeup_published_at is null or wakeup_published_at < next_attempt_at)
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    update reminder_jobs job set wakeup_published_at = greatest(${now}::timestamptz, job.next_attempt_at)
    from due where job.id = due.id
    returning job.id, job.batch_id, job.next_attempt_at, due.woken`);
  return result.rows.map((row) => ({ id: row.id, batchId: row.batch_id, nextAttemptAt: new Date(row.next_attempt_at), woken: row.woken }));
}

/** Moves a pending job's next wake-up (test fixtures and deferrals outside the send path). */
export async function setNextAttemptAt(db: DbOrTx, { id, at }: { id: string; at: Date }): Promise<void> {
  await db
    .update(reminderJobs)
    .set({ nextAttemptAt: at })
    .where(and(eq(reminderJobs.id, id), eq(reminderJobs.state, 'pending')));
}
