import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import type { Channel } from '@/db/schema/states';

/**
 * The managers' duplicate-rate report. Periods are UTC days or ISO weeks (Monday).
 * Every figure comes from an aggregate over an indexed time range; no per-row work in Node.
 */

export type Granularity = 'day' | 'week';
export type ReportRange = { granularity: Granularity; from: Date; to: Date };

/**
 * THE classification of a refused or discarded wake-up, in one place. The send path
 * (lib/jobs/handle-wakeup.ts) records:
 *   - a batch id on every attempt a replay woke → replay;
 *   - detail naming the cause outright (demo seed, producers' backfills) → that cause;
 *   - `discarded` with detail job_<state>: the job was already final when the wake-up came,
 *     i.e. the queue handed it out again → queue redelivery;
 *   - `suppressed_duplicate`/`would_suppress` with detail ledger_<state>: the claim insert
 *     found another attempt's row while this job was still open → concurrent worker.
 */
export const duplicateCauseCase = (alias: string): SQL =>
  sql.raw(`case
    when ${alias}.batch_id is not null then 'replay'
    when ${alias}.detail in ('queue_redelivery', 'concurrent_worker', 'replay', 'producer_retry') then ${alias}.detail
    when ${alias}.outcome = 'discarded' or ${alias}.detail like 'job\\_%' then 'queue_redelivery'
    when ${alias}.detail like 'ledger\\_%' then 'concurrent_worker'
    else 'unclassified' end`);

/** Runs the classification over literal cases (tests, and anyone checking a row by hand). */
export async function classifyAttempts(
  db: DbOrTx,
  { cases }: { cases: { outcome: string; batchId: string | null; detail: string | null }[] },
): Promise<string[]> {
  if (cases.length === 0) return [];
  const result = await db.execute<{ cause: string }>(sql`
    select ${duplicateCauseCase('a')} as cause
    from unnest(${sql.param(cases.map((c) => c.outcome))}::text[], ${sql.param(cases.map((c) => c.batchId))}::text[], ${sql.param(cases.map((c) => c.detail))}::text[])
      with ordinality as a(outcome, batch_id, detail, n)
    order by a.n`);
  return result.rows.map((row) => row.cause);
}

const period = (granularity: Granularity, column: string): SQL =>
  sql.raw(`to_char(date_trunc('${granularity === 'week' ? 'week' : 'day'}', ${column} at time zone 'UTC'), 'YYYY-MM-DD')`);

/** `channel`: the job's (email or sms); a row without a job (a backfill) counts as email. */
export type ClaimCount = { period: string; noticeType: string; claims: number; channel?: Channel };

/** Claims the send path minted (backfilled rows are not claims). */
export async function countClaimsMinted(db: DbOrTx, { granularity, from, to }: ReportRange): Promise<ClaimCount[]> {
  const result = await db.execute<{ period: string; notice_type: string; claims: number; channel: Channel }>(sql`
    select ${period(granularity, 'l.claimed_at')} as period, l.notice_type, coalesce(j.channel, 'email') as channel, count(*)::int as claims
    from notice_ledger l
    left join reminder_jobs j on j.id = l.job_id
    where l.claimed_at >= ${from} and l.claimed_at < ${to} and l.source <> 'backfill'
    group by 1, 2, 3`);
  return result.rows.map((row) => ({ period: row.period, noticeType: row.notice_type, claims: row.claims, channel: row.channel }));
}

export type DuplicateCount = { period: string; noticeType: string; cause: string; shadow: boolean; count: number; channel?: Channel };

/** Refused and discarded wake-ups (and shadow mode's would-have-been refusals), by cause. */
export async function countDuplicates(db: DbOrTx, { granularity, from, to }: ReportRange): Promise<DuplicateCount[]> {
  const result = await db.execute<{ period: string; notice_type: string; cause: string; shadow: boolean; count: number; channel: Channel }>(sql`
    select ${period(granularity, 'a.started_at')} as period,
           coalesce(j.notice_type, l.notice_type, 'unknown') as notice_type,
           coalesce(j.channel, 'email') as channel,
           ${duplicateCauseCase('a')} as cause,
           a.outcome = 'would_suppress' as shadow,
           count(*)::int as count
    from delivery_attempts a
    left join reminder_jobs j on j.id = a.job_id
    left join notice_ledger l on j.id is null and l.notice_key = a.notice_key
    where a.started_at >= ${from} and a.started_at < ${to}
      and a.outcome in ('suppressed_duplicate', 'discarded', 'would_suppress')
    group by 1, 2, 3, 4, 5`);
  return result.rows.map((row) => ({
    period: row.period,
    noticeType: row.notice_type,
    cause: row.cause,
    shadow: row.shadow,
    count: row.count,
    channel: row.channel,
  }));
}

export type QuarantineFlow = {
  period: string;
  inflow: number;
  resolved: number;
  open: number;
  medianMinutesToResolve: number | null;
  maxMinutesToResolve: number | null;
};

/**
 * Claims that stayed `claimed` past QUARANTINE_AFTER, by the period they entered quarantine:
 * still open, or resolved later (resolved_at after the threshold). Time to resolve runs from
 * entering quarantine to the resolution.
 */
export async function quarantineFlow(
  db: DbOrTx,
  { granularity, from, to, quarantineAfterMs }: ReportRange & { quarantineAfterMs: number },
): Promise<QuarantineFlow[]> {
  const threshold = sql`make_interval(secs => ${quarantineAfterMs / 1000})`;
  const result = await db.execute<{ period: string; inflow: number; resolved: number; open: number; median: number | null; max: number | null }>(sql`
    with entered as (
      select claimed_at + ${threshold} as entered_at, state, resolved_at
      from notice_ledger
      where claimed_at + ${threshold} >= ${from} and claimed_at + ${threshold} < ${to}
        and ((state = 'claimed' and claimed_at + ${threshold} <= now()) or resolved_at > claimed_at + ${threshold})
    )
    select ${period(granularity, 'entered_at')} as period,
           count(*)::int as inflow,
           count(*) filter (where state <> 'claimed' and resolved_at is not null)::int as resolved,
           count(*) filter (where state = 'claimed')::int as open,
           (percentile_cont(0.5) within group (order by extract(epoch from resolved_at - entered_at) / 60) filter (where state <> 'claimed' and resolved_at is not null))::float8 as median,
           (max(extract(epoch from resolved_at - entered_at) / 60) filter (where state <> 'claimed' and resolved_at is not null))::float8 as max
    from entered
    group by 1`);
  return result.rows.map((row) => ({
    period: row.period,
    inflow: row.inflow,
    resolved: row.resolved,
    open: row.open,
    medianMinutesToResolve: row.median,
    maxMinutesToResolve: row.max,
  }));
}

export type AuditActionCount = { period: string; action: string; count: number };

/** On-call's quarantine decisions from the audit log (one row per notice resolved). */
export async function countQuarantineActions(db: DbOrTx, { granularity, from, to }: ReportRange): Promise<AuditActionCount[]> {
  const result = await db.execute<{ period: string; action: string; count: number }>(sql`
    select ${period(granularity, 'at')} as period, action, count(*)::int as count
    from audit_log
    where at >= ${from} and at < ${to} and action like 'quarantine.%'
    group by 1, 2`);
  return result.rows.map((row) => ({ period: row.period, action: row.action, count: row.count }));
}
