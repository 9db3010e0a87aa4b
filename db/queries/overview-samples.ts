import { sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '@/db/client';
import { overviewSamples } from '@/db/schema';
import { toDate } from './console-dates';

/**
 * The overview's stored series (overview_samples) and the queries its one writer runs
 * (lib/metrics/overview-writer.ts). Everything here reads through a range index: attempts by
 * delivery_attempts_started_idx, the ledger and jobs by primary key, provider events by
 * provider_events_notice_key_idx; nothing scans notice_ledger.
 */

export type SampleRow = { at: Date; series: string; key: string; value: number };

export async function insertSamples(db: DbOrTx, rows: readonly SampleRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insert(overviewSamples)
    .values(rows.map((row) => ({ ...row })))
    .onConflictDoNothing();
}

export async function pruneSamples(db: DbOrTx, { before }: { before: Date }): Promise<number> {
  const result = await db.execute(sql`delete from overview_samples where at < ${before.toISOString()}::timestamptz`);
  return result.rowCount ?? 0;
}

/** The newest sample's instant, or null: the writer samples the interval since it. */
export async function latestSampleAt(db: DbOrTx): Promise<Date | null> {
  const result = await db.execute<{ at: unknown }>(sql`select max(at) as at from overview_samples`);
  const at = result.rows[0]?.at;
  return at === null || at === undefined ? null : toDate(at);
}

/** The rows of the newest sample of the given series (one instant), e.g. the delivery figures for the table and the gauges. */
export async function readLatestSamples(db: DbOrTx, { series }: { series: readonly string[] }): Promise<SampleRow[]> {
  const result = await db.execute<{ at: unknown; series: string; key: string; value: number }>(sql`
    select at, series, key, value from overview_samples
    where at = (select max(at) from overview_samples where series = any(${sql.param([...series])}::text[]))
      and series = any(${sql.param([...series])}::text[])
    order by series, key`);
  return result.rows.map((row) => ({ ...row, at: toDate(row.at), value: Number(row.value) }));
}

export type BinnedSample = { bucket: Date; series: string; key: string; last: number; sum: number; max: number };

/** Levels: a bucket shows its last sample's value. Everything else is a count over its interval or a percentile. */
const LEVEL_SERIES = ['pending', 'quarantined', 'delivery_measured', 'handed_over', 'delivered', 'gap'];
const INTERVAL_SERIES = ['attempts', 'claims', 'duplicates', 'would_suppress', 'failures', 'latency_p50', 'latency_p99'];

/**
 * The samples in [from, to) folded into display buckets: per (bucket, series, key) the last
 * value for a level (pending, quarantined, the delivery figures), the sum and the highest for
 * an interval's count or percentile. Two reads on the primary key's `at` range: the levels only
 * at each bucket's last instant (a `quarantined` row marks every sample), the interval series
 * aggregated. At a week of one-a-minute samples (230 k rows) one array_agg over everything took
 * 240 ms; bench/overview-writer.ts prints this one.
 */
export async function readBinnedSamples(db: DbOrTx, { from, to, bucketMs }: { from: Date; to: Date; bucketMs: number }): Promise<BinnedSample[]> {
  const range = sql`at >= ${from.toISOString()}::timestamptz and at < ${to.toISOString()}::timestamptz`;
  const bin = sql`date_bin(make_interval(secs => ${bucketMs / 1000}), at, 'epoch'::timestamptz)`;
  const [levels, intervals] = await Promise.all([
    db.execute<{ bucket: unknown; series: string; key: string; value: number }>(sql`
      with instants as (
        select ${bin} as bucket, max(at) as at from overview_samples where ${range} and series = 'quarantined' group by 1
      )
      -- A LIMIT keeps the lookup per instant on the primary key: joined plainly, the planner hashed the whole table.
      select i.bucket, s.series, s.key, s.value
      from instants i
      cross join lateral (
        select series, key, value from overview_samples s
        where s.at = i.at and s.series = any(${sql.param(LEVEL_SERIES)}::text[])
        limit 1000
      ) s`),
    db.execute<{ bucket: unknown; series: string; key: string; sum: number; max: number }>(sql`
      select ${bin} as bucket, series, key, sum(value) as sum, max(value) as max
      from overview_samples
      where ${range} and series = any(${sql.param(INTERVAL_SERIES)}::text[])
      group by 1, 2, 3`),
  ]);
  return [
    ...levels.rows.map((row) => {
      const value = Number(row.value);
      return { bucket: toDate(row.bucket), series: row.series, key: row.key, last: value, sum: value, max: value };
    }),
    ...intervals.rows.map((row) => ({
      bucket: toDate(row.bucket),
      series: row.series,
      key: row.key,
      last: Number(row.max),
      sum: Number(row.sum),
      max: Number(row.max),
    })),
  ].sort((a, b) => a.bucket.getTime() - b.bucket.getTime() || a.series.localeCompare(b.series) || a.key.localeCompare(b.key));
}

export async function tryLockSampleWriter(tx: Tx, lockKey: number): Promise<boolean> {
  const result = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${lockKey}) as locked`);
  return result.rows[0]?.locked === true;
}

export type AttemptIntervalFigures = {
  attempts: number;
  /** Attempts that wrote a ledger claim (sent, retryable, permanent, unknown), refused as duplicates, and shadow mode's would-suppress. */
  claims: number;
  duplicates: number;
  wouldSuppress: number;
  p50: number | null;
  p99: number | null;
  failures: { errorClass: string; count: number }[];
};

/**
 * Attempts started in [from, to): how many, claim-to-commit p50/p99 (one ordered-set aggregate),
 * and the failures (retryable, permanent, outcome unknown) by error class. Both read the
 * covering delivery_attempts_started_idx range; the class needs the heap for failures only.
 */
export async function summariseAttempts(db: DbOrTx, { from, to }: { from: Date; to: Date }): Promise<AttemptIntervalFigures> {
  const range = sql`started_at >= ${from.toISOString()}::timestamptz and started_at < ${to.toISOString()}::timestamptz`;
  const [totals, failures] = await Promise.all([
    db.execute<{ attempts: number; claims: number; duplicates: number; would_suppress: number; p50: number | null; p99: number | null }>(sql`
      select n::int as attempts, claims, duplicates, would_suppress, round(p[1])::int as p50, round(p[2])::int as p99 from (
        select count(*) as n, percentile_cont(array[0.5, 0.99]) within group (order by claim_to_commit_ms) as p,
          count(*) filter (where outcome in ('sent', 'retryable_failure', 'permanent_failure', 'unknown'))::int as claims,
          count(*) filter (where outcome = 'suppressed_duplicate')::int as duplicates,
          count(*) filter (where outcome = 'would_suppress')::int as would_suppress
        from delivery_attempts where ${range}
      ) s`),
    db.execute<{ errorClass: string; count: number }>(sql`
      select coalesce(error_class, outcome) as "errorClass", count(*)::int as count
      from delivery_attempts
      where ${range} and outcome in ('retryable_failure', 'permanent_failure', 'unknown')
      group by 1 order by 2 desc`),
  ]);
  const row = totals.rows[0];
  return {
    attempts: Number(row?.attempts ?? 0),
    claims: Number(row?.claims ?? 0),
    duplicates: Number(row?.duplicates ?? 0),
    wouldSuppress: Number(row?.would_suppress ?? 0),
    p50: row?.p50 === null || row?.p50 === undefined ? null : Number(row.p50),
    p99: row?.p99 === null || row?.p99 === undefined ? null : Number(row.p99),
    failures: failures.rows.map((failure) => ({ errorClass: failure.errorClass, count: Number(failure.count) })),
  };
}

export type HandoverRow = { channel: 'email' | 'sms'; handedOver: number; delivered: number; evidence: boolean };

/**
 * Accepted vs delivered from our own hand-over (lib/metrics/delivery-gap.ts says it in words):
 * per channel, the notices whose `sent` attempt (written in the statement that makes the
 * ledger row `sent`, db/queries/ledger/commit.ts) started in [from, to) and whose ledger row is
 * `sent`; of those, the ones with a provider `delivered` event; and whether the channel has
 * any delivery evidence at all since `evidenceSince`: a delivered event from its provider
 * (Twilio for SMS, `emailEventProviders` for email). The attempts come from the
 * started_at index range, the ledger and job by primary key, the events by notice key.
 */
export async function countHandoverVsDelivery(
  db: DbOrTx,
  {
    from,
    to,
    evidenceSince,
    emailEventProviders,
  }: {
    from: Date;
    to: Date;
    evidenceSince: Date;
    /** The provider_events.provider names the email transport's events arrive under. */
    emailEventProviders: readonly string[];
  },
): Promise<HandoverRow[]> {
  const result = await db.execute<{ channel: 'email' | 'sms'; handed_over: number; delivered: number; evidence: boolean }>(sql`
    with handed as (
      select distinct a.notice_key, j.channel
      from delivery_attempts a
      -- LIMIT 1 keeps each lookup a per-row index probe: without it the planner hash-joins the
      -- whole ledger and job table (a parallel seq scan of both, 60 ms at 100 k rows).
      cross join lateral (select 1 from notice_ledger l where l.notice_key = a.notice_key and l.state = 'sent' limit 1) l
      cross join lateral (select channel from reminder_jobs j where j.id = a.job_id limit 1) j
      where a.started_at >= ${from.toISOString()}::timestamptz and a.started_at < ${to.toISOString()}::timestamptz
        and a.outcome = 'sent'
    ), per_channel as (
      select h.channel, count(*)::int as handed_over,
        count(*) filter (where exists (
          select 1 from provider_events e where e.notice_key = h.notice_key and e.event_type = 'delivered'
        ))::int as delivered
      from handed h
      group by 1
    )
    select p.channel, p.handed_over, p.delivered,
      -- Newest first on provider_events_received_idx: stops at the first delivered event, reads at most the lookback.
      p.delivered > 0 or exists (
        select 1 from provider_events e
        where e.received_at >= ${evidenceSince.toISOString()}::timestamptz
          and e.event_type = 'delivered' and e.notice_key is not null
          and e.provider = any(case when p.channel = 'sms' then array['twilio'] else ${sql.param([...emailEventProviders])}::text[] end)
        order by e.received_at desc
        limit 1
      ) as evidence
    from per_channel p
    order by 1`);
  return result.rows.map((row) => ({
    channel: row.channel,
    handedOver: Number(row.handed_over),
    delivered: Number(row.delivered),
    evidence: row.evidence === true,
  }));
}
