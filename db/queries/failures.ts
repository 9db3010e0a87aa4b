import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import type { Channel } from '@/db/schema/states';
import { toDate, toDateOrNull } from './console-dates';

/**
 * Notices that need a person's eye (the console's Failures page, lib/console/failures.ts):
 * `failed` (a permanent refusal), `retrying` (pending after a temporary failure, retried until
 * its window closes), `deferred` (pending and held past its due time: quiet hours, a throttle,
 * a paused transport) and `window_missed`. Every statement walks reminder_jobs_attention_idx
 * (updated_at, id), whose predicate is the union of the four, newest first; the kind's own
 * condition implies it, so each kind reads the same index. At 10 M jobs the attention set is the
 * few that went wrong, not the table.
 */

export const failureKinds = ['failed', 'retrying', 'deferred', 'window_missed'] as const;
export type FailureKind = (typeof failureKinds)[number];

const kindCondition: Record<FailureKind, SQL> = {
  failed: sql`state = 'failed'`,
  retrying: sql`state = 'pending' and last_error_class is not null`,
  deferred: sql`state = 'pending' and last_error_class is null and next_attempt_at > due_at`,
  window_missed: sql`state = 'suppressed' and suppression_reason = 'window_missed'`,
};

/** The index's predicate, word for word, so the planner proves it (db/schema/jobs.ts). */
const anyKind = sql`(state = 'failed' or (state = 'suppressed' and suppression_reason = 'window_missed') or (state = 'pending' and (last_error_class is not null or next_attempt_at > due_at)))`;

export type FailureFilter = {
  kind?: FailureKind;
  noticeType?: string;
  channel?: Channel;
  /** The job's last error class (smtp_451, connect_failed, render_failed, …). */
  errorClass?: string;
  /** When it last changed (failed, retried, deferred, missed): [from, to). */
  from?: Date;
  to?: Date;
};

const iso = (date: Date) => sql`${date.toISOString()}::timestamptz`;

function conditions(filter: FailureFilter): SQL {
  const parts: SQL[] = [filter.kind ? kindCondition[filter.kind] : anyKind];
  if (filter.noticeType) parts.push(sql`notice_type = ${filter.noticeType}`);
  if (filter.channel) parts.push(sql`channel = ${filter.channel}`);
  if (filter.errorClass) parts.push(sql`last_error_class = ${filter.errorClass}`);
  if (filter.from) parts.push(sql`updated_at >= ${iso(filter.from)}`);
  if (filter.to) parts.push(sql`updated_at < ${iso(filter.to)}`);
  return sql.join(parts, sql` and `);
}

export type FailureRow = {
  id: string;
  noticeKey: string;
  noticeType: string;
  category: string;
  channel: string;
  subjectId: string;
  kind: FailureKind;
  state: string;
  suppressionReason: string | null;
  attempts: number;
  lastErrorClass: string | null;
  dueAt: Date;
  deadlineAt: Date;
  nextAttemptAt: Date;
  updatedAt: Date;
  lastAttempt: { outcome: string; detail: string | null; errorClass: string | null; at: Date } | null;
  cursorAt: string;
};

type RawFailure = Omit<FailureRow, 'dueAt' | 'deadlineAt' | 'nextAttemptAt' | 'updatedAt' | 'lastAttempt'> & {
  dueAt: unknown;
  deadlineAt: unknown;
  nextAttemptAt: unknown;
  updatedAt: unknown;
  attemptOutcome: string | null;
  attemptDetail: string | null;
  attemptErrorClass: string | null;
  attemptAt: unknown;
};

export type FailureCursor = { at: string; id: string };

/** One page, newest change first; keyset on (updated_at desc, id desc). The last attempt of each row says why, in its own words. */
export async function listFailures(
  db: DbOrTx,
  { filter, limit, after }: { filter: FailureFilter; limit: number; after?: FailureCursor },
): Promise<FailureRow[]> {
  const result = await db.execute<RawFailure>(sql`
    select j.*, a.outcome as "attemptOutcome", a.detail as "attemptDetail", a.error_class as "attemptErrorClass", a.started_at as "attemptAt"
    from (
      select id, notice_key as "noticeKey", notice_type as "noticeType", category, channel, subject_id as "subjectId", state,
        case when state = 'failed' then 'failed' when state = 'suppressed' then 'window_missed'
             when last_error_class is not null then 'retrying' else 'deferred' end as kind,
        suppression_reason as "suppressionReason", attempts, last_error_class as "lastErrorClass", due_at as "dueAt",
        deadline_at as "deadlineAt", next_attempt_at as "nextAttemptAt", updated_at as "updatedAt", updated_at::text as "cursorAt"
      from reminder_jobs
      where ${conditions(filter)}
        ${after ? sql`and (updated_at, id) < (${after.at}::timestamptz, ${after.id}::uuid)` : sql``}
      order by updated_at desc, id desc
      limit ${limit}
    ) j
    left join lateral (
      select outcome, detail, error_class, started_at from delivery_attempts where job_id = j.id order by id desc limit 1
    ) a on true
    order by j."updatedAt" desc, j.id desc`);
  return result.rows.map((row) => ({
    id: row.id,
    noticeKey: row.noticeKey,
    noticeType: row.noticeType,
    category: row.category,
    channel: row.channel,
    subjectId: row.subjectId,
    kind: row.kind,
    state: row.state,
    suppressionReason: row.suppressionReason,
    attempts: row.attempts,
    lastErrorClass: row.lastErrorClass,
    dueAt: toDate(row.dueAt),
    deadlineAt: toDate(row.deadlineAt),
    nextAttemptAt: toDate(row.nextAttemptAt),
    updatedAt: toDate(row.updatedAt),
    lastAttempt: row.attemptOutcome
      ? { outcome: row.attemptOutcome, detail: row.attemptDetail, errorClass: row.attemptErrorClass, at: toDateOrNull(row.attemptAt) ?? toDate(row.updatedAt) }
      : null,
    cursorAt: row.cursorAt,
  }));
}

/** Failed notices a bulk retry would take: failed, matching, window still open at `now`. */
function retryableConditions(filter: Omit<FailureFilter, 'kind'>, now: Date): SQL {
  return sql`${conditions({ ...filter, kind: 'failed' })} and deadline_at > ${iso(now)}`;
}

export async function countRetryableFailures(db: DbOrTx, { filter, now }: { filter: Omit<FailureFilter, 'kind'>; now: Date }): Promise<number> {
  const result = await db.execute<{ count: number }>(sql`select count(*)::int as count from reminder_jobs where ${retryableConditions(filter, now)}`);
  return result.rows[0]?.count ?? 0;
}

export type LockedFailure = {
  id: string;
  noticeKey: string;
  state: string;
  deadlineAt: Date;
  attempts: number;
  lastErrorClass: string | null;
  ledgerState: string | null;
  batchId: string | null;
};

/** One job and its ledger row's state, the job locked for a person's retry. */
export async function lockJobForRetry(db: DbOrTx, { id }: { id: string }): Promise<LockedFailure | null> {
  const result = await db.execute<Omit<LockedFailure, 'deadlineAt'> & { deadlineAt: unknown }>(sql`
    select j.id, j.notice_key as "noticeKey", j.state, j.deadline_at as "deadlineAt", j.attempts, j.last_error_class as "lastErrorClass",
      j.batch_id as "batchId", (select l.state from notice_ledger l where l.notice_key = j.notice_key) as "ledgerState"
    from reminder_jobs j where j.id = ${id}::uuid
    for update of j`);
  const row = result.rows[0];
  return row ? { ...row, deadlineAt: toDate(row.deadlineAt) } : null;
}

/**
 * A failed job back to pending, due now, with a fresh count of attempts (the window stays its
 * budget). Conditional on `failed` and an open window; the ledger row of a failed job is
 * `released`, so the next claim takes it over and keeps its one-time code (db/queries/ledger/claim.ts).
 */
export async function reopenFailedJobs(db: DbOrTx, { ids, now }: { ids: readonly string[]; now: Date }): Promise<string[]> {
  if (ids.length === 0) return [];
  const result = await db.execute<{ id: string }>(sql`
    update reminder_jobs set state = 'pending', attempts = 0, next_attempt_at = ${iso(now)}, last_error_class = null,
      wakeup_published_at = null, updated_at = now()
    where id = any(${sql.param([...ids])}::uuid[]) and state = 'failed' and deadline_at > ${iso(now)}
    returning id`);
  return result.rows.map((row) => row.id);
}

/** The failed jobs a bulk retry takes (at most `limit`), locked; the ones another transaction holds are skipped. */
export async function lockRetryableFailures(
  db: DbOrTx,
  { filter, now, limit }: { filter: Omit<FailureFilter, 'kind'>; now: Date; limit: number },
): Promise<string[]> {
  const result = await db.execute<{ id: string }>(sql`
    select id from reminder_jobs where ${retryableConditions(filter, now)}
    order by updated_at, id
    limit ${limit}
    for update skip locked`);
  return result.rows.map((row) => row.id);
}

/** A bulk retry's frozen job set (a replay item per job), for the replay runner to publish once reopened. */
export async function materializeRetryItems(
  db: DbOrTx,
  { replayId, filter, now }: { replayId: string; filter: Omit<FailureFilter, 'kind'>; now: Date },
): Promise<string[]> {
  const result = await db.execute<{ job_id: string }>(sql`
    insert into replay_items (replay_id, notice_key, job_id)
    select ${replayId}::uuid, notice_key, id from reminder_jobs where ${retryableConditions(filter, now)}
    on conflict do nothing
    returning job_id`);
  return result.rows.map((row) => row.job_id);
}

/** The wake-up a person's retry publishes was recorded (pg-boss, in this transaction). */
export async function markRetryWoken(db: DbOrTx, { ids, at }: { ids: readonly string[]; at: Date }): Promise<void> {
  if (ids.length === 0) return;
  await db.execute(sql`update reminder_jobs set wakeup_published_at = ${iso(at)} where id = any(${sql.param([...ids])}::uuid[])`);
}
