import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { toDate, toDateOrNull } from './console-dates';

/**
 * Send windows at risk, missed, and compliance gaps: the console's Windows page, the overview's
 * banner and the scrape-time gauges. Each reads through a small partial index:
 * - at risk: reminder_jobs_open_deadline_idx (deadline_at, notice_type, region, due_at) where state
 *   in ('pending', 'claimed') — a range on the deadline, index-only for the counts;
 * - missed: reminder_jobs_missed_idx (updated_at) where the job was suppressed for its window
 *   (`window_missed`, or `deadline_passed`, its name before migration 0009, which an older worker
 *   may still write during a rolling deploy);
 * - gaps: unplanned_notices_open_idx (created_at) where resolved_at is null (few rows by design).
 */

/** A job with no region (scheduled without one) is counted under this label. */
export const NO_REGION = 'none';

export type WindowCountRow = { noticeType: string; region: string; count: number };

const iso = (date: Date) => sql`${date.toISOString()}::timestamptz`;

/** MAX_ATTEMPTS's default, for callers (tests, benchmarks) that do not pass the setting. */
export const DEFAULT_RETRY_CEILING = 8;

/**
 * At risk: due, not sent, and either its window closes within WINDOW_AT_RISK_WITHIN, or (the second,
 * disjoint arm) a required notice still retrying after MAX_ATTEMPTS temporary failures, whatever
 * its deadline (lib/jobs/backoff.ts: the window is the budget, and past the ceiling it is at risk).
 * Two arms, each through its own partial index: reminder_jobs_open_deadline_idx and
 * reminder_jobs_retrying_idx (few rows: pending with a last error).
 */
function atRiskArms({ now, withinMs, retryCeiling }: { now: Date; withinMs: number; retryCeiling: number }) {
  const closesBy = iso(new Date(now.getTime() + withinMs));
  return {
    closing: sql`state in ('pending', 'claimed') and deadline_at >= ${iso(now)} and deadline_at < ${closesBy} and due_at <= ${iso(now)}`,
    retrying: sql`state = 'pending' and last_error_class is not null and deadline_at >= ${closesBy} and due_at <= ${iso(now)}
      and category = 'required' and attempts >= ${retryCeiling}`,
  };
}

export async function countWindowsAtRisk(
  db: DbOrTx,
  { now, withinMs, retryCeiling = DEFAULT_RETRY_CEILING }: { now: Date; withinMs: number; retryCeiling?: number },
): Promise<WindowCountRow[]> {
  const arms = atRiskArms({ now, withinMs, retryCeiling });
  const result = await db.execute<WindowCountRow>(sql`
    select "noticeType", region, sum(count)::int as count from (
      select notice_type as "noticeType", coalesce(region, ${NO_REGION}) as region, count(*)::int as count
      from reminder_jobs where ${arms.closing} group by 1, 2
      union all
      select notice_type, coalesce(region, ${NO_REGION}), count(*)::int from reminder_jobs where ${arms.retrying} group by 1, 2
    ) arms
    group by 1, 2
    order by 1, 2`);
  return result.rows;
}

export type MissedCountRow = { noticeType: string; region: string; last24h: number; last7d: number };

/** Jobs suppressed because their window closed, in the last 24 h and 7 d, by type × region. */
export async function countMissedWindows(db: DbOrTx, { now }: { now: Date }): Promise<MissedCountRow[]> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const result = await db.execute<MissedCountRow>(sql`
    select notice_type as "noticeType", coalesce(region, ${NO_REGION}) as region,
      count(*) filter (where updated_at >= ${iso(dayAgo)})::int as "last24h", count(*)::int as "last7d"
    from reminder_jobs
    where state = 'suppressed' and suppression_reason in ('window_missed', 'deadline_passed')
      and updated_at >= ${iso(new Date(now.getTime() - 7 * 86_400_000))} and updated_at <= ${iso(now)}
    group by 1, 2
    order by 1, 2`);
  return result.rows;
}

/** Open required unplanned notices (compliance gaps), by type × region. */
export async function countComplianceGaps(db: DbOrTx): Promise<WindowCountRow[]> {
  const result = await db.execute<WindowCountRow>(sql`
    select notice_type as "noticeType", region, count(*)::int as count
    from unplanned_notices
    where resolved_at is null and category = 'required'
    group by 1, 2
    order by 1, 2`);
  return result.rows;
}

export type WindowJobRow = {
  id: string;
  noticeKey: string;
  noticeType: string;
  category: string;
  region: string | null;
  subjectId: string;
  state: string;
  dueAt: Date;
  windowEarliest: Date | null;
  deadlineAt: Date;
  ruleIds: string[];
  ruleSetVersion: string | null;
  suppressionReason: string | null;
  attempts: number;
  lastErrorClass: string | null;
  updatedAt: Date;
  /** The row's sort instant as PostgreSQL prints it: the next page's cursor, exact to the microsecond. */
  cursorAt: string;
};

type RawJob = Omit<WindowJobRow, 'dueAt' | 'windowEarliest' | 'deadlineAt' | 'updatedAt'> & {
  dueAt: unknown;
  windowEarliest: unknown;
  deadlineAt: unknown;
  updatedAt: unknown;
};

const jobColumns = sql`id, notice_key as "noticeKey", notice_type as "noticeType", category, region, subject_id as "subjectId", state,
  due_at as "dueAt", window_earliest as "windowEarliest", deadline_at as "deadlineAt", rule_ids as "ruleIds",
  rule_set_version as "ruleSetVersion", suppression_reason as "suppressionReason", attempts, last_error_class as "lastErrorClass", updated_at as "updatedAt"`;

function toJob(row: RawJob): WindowJobRow {
  return {
    ...row,
    dueAt: toDate(row.dueAt),
    windowEarliest: toDateOrNull(row.windowEarliest),
    deadlineAt: toDate(row.deadlineAt),
    updatedAt: toDate(row.updatedAt),
  };
}

export type JobCursor = { at: string; id: string };

/** At-risk jobs, the window closing soonest first; keyset on (deadline_at, id). */
export async function listWindowsAtRisk(
  db: DbOrTx,
  {
    now,
    withinMs,
    limit,
    after,
    retryCeiling = DEFAULT_RETRY_CEILING,
  }: { now: Date; withinMs: number; limit: number; after?: JobCursor; retryCeiling?: number },
): Promise<WindowJobRow[]> {
  const arms = atRiskArms({ now, withinMs, retryCeiling });
  const keyset = after ? sql`and (deadline_at, id) > (${after.at}::timestamptz, ${after.id}::uuid)` : sql``;
  // The arms are disjoint by deadline (the closing one ends where the retrying one starts), so each is a page of its own index in order.
  const result = await db.execute<RawJob>(sql`
    select * from (
      (select ${jobColumns}, deadline_at::text as "cursorAt", deadline_at as sort_at
       from reminder_jobs where ${arms.closing} ${keyset} order by deadline_at, id limit ${limit})
      union all
      (select ${jobColumns}, deadline_at::text as "cursorAt", deadline_at as sort_at
       from reminder_jobs where ${arms.retrying} ${keyset} order by deadline_at, id limit ${limit})
    ) arms
    order by sort_at, id
    limit ${limit}`);
  return result.rows.map(toJob);
}

/** Missed windows of the last 7 days, newest first; keyset on (updated_at desc, id desc). */
export async function listMissedWindows(db: DbOrTx, { now, limit, after }: { now: Date; limit: number; after?: JobCursor }): Promise<WindowJobRow[]> {
  const result = await db.execute<RawJob>(sql`
    select ${jobColumns}, updated_at::text as "cursorAt"
    from reminder_jobs
    where state = 'suppressed' and suppression_reason in ('window_missed', 'deadline_passed')
      and updated_at >= ${iso(new Date(now.getTime() - 7 * 86_400_000))} and updated_at <= ${iso(now)}
      ${after ? sql`and (updated_at, id) < (${after.at}::timestamptz, ${after.id}::uuid)` : sql``}
    order by updated_at desc, id desc
    limit ${limit}`);
  return result.rows.map(toJob);
}

export type GapRow = {
  id: number;
  noticeType: string;
  category: string;
  reason: string;
  detail: string | null;
  ruleIds: string[];
  ruleSetVersion: string;
  region: string;
  createdAt: Date;
  eventType: string;
  identity: Record<string, string>;
  anchorAt: Date;
  revision: number;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  resolution: string | null;
  cursorAt: string;
};

type RawGap = Omit<GapRow, 'createdAt' | 'anchorAt' | 'resolvedAt' | 'id'> & { id: unknown; createdAt: unknown; anchorAt: unknown; resolvedAt: unknown };

const gapColumns = sql`u.id, u.notice_type as "noticeType", u.category, u.reason, u.detail, u.rule_ids as "ruleIds",
  u.rule_set_version as "ruleSetVersion", u.region, u.created_at as "createdAt", e.type as "eventType", e.identity,
  e.anchor_at as "anchorAt", e.revision, u.resolved_at as "resolvedAt", u.resolved_by as "resolvedBy", u.resolution,
  u.created_at::text as "cursorAt"`;

function toGap(row: RawGap): GapRow {
  return { ...row, id: Number(row.id), createdAt: toDate(row.createdAt), anchorAt: toDate(row.anchorAt), resolvedAt: toDateOrNull(row.resolvedAt) };
}

export type GapCursor = { at: string; id: number };

/** Open compliance gaps, newest first; keyset on (created_at desc, id desc). */
export async function listComplianceGaps(db: DbOrTx, { limit, after }: { limit: number; after?: GapCursor }): Promise<GapRow[]> {
  const result = await db.execute<RawGap>(sql`
    select ${gapColumns}
    from unplanned_notices u join business_events e on e.id = u.event_id
    where u.resolved_at is null and u.category = 'required'
      ${after ? sql`and (u.created_at, u.id) < (${after.at}::timestamptz, ${after.id})` : sql``}
    order by u.created_at desc, u.id desc
    limit ${limit}`);
  return result.rows.map(toGap);
}

/** One gap, locked for its resolution (null: no such required unplanned notice). */
export async function lockComplianceGap(db: DbOrTx, { id }: { id: number }): Promise<GapRow | null> {
  const result = await db.execute<RawGap>(sql`
    select ${gapColumns}
    from unplanned_notices u join business_events e on e.id = u.event_id
    where u.id = ${id} and u.category = 'required'
    for update of u`);
  const row = result.rows[0];
  return row ? toGap(row) : null;
}

/** Guarded by resolved_at is null: a gap resolved meanwhile is not resolved twice (null returned). */
export async function markGapResolved(
  db: DbOrTx,
  { id, by, resolution, at }: { id: number; by: string; resolution: string; at: Date },
): Promise<{ resolvedAt: Date } | null> {
  const result = await db.execute<{ resolvedAt: unknown }>(sql`
    update unplanned_notices set resolved_at = ${iso(at)}, resolved_by = ${by}, resolution = ${resolution}
    where id = ${id} and resolved_at is null
    returning resolved_at as "resolvedAt"`);
  const row = result.rows[0];
  return row ? { resolvedAt: toDate(row.resolvedAt) } : null;
}
