import pg from 'pg';
import { createDb, createPool } from '@/db/client';
import { provisionDatabase } from '@/testing/database';
import { writeOverviewSample } from '@/lib/metrics/overview-writer';
import { DELIVERY_EVIDENCE_LOOKBACK_MS, DELIVERY_WINDOW_MS } from '@/lib/metrics/delivery-gap';

/**
 * What the overview's sample writer costs (lib/metrics/overview-writer.ts), on a ledger of
 * BENCH_LEDGER_ROWS `sent` notices spread over 7 days (their jobs, `sent` attempts and, for
 * 80 %, a delivered provider event), a few hundred claimed and BENCH_PENDING pending jobs:
 * EXPLAIN (ANALYZE, BUFFERS) of the hand-over-vs-delivery query and the attempts summary, then
 * the whole sample timed BENCH_SAMPLES times. Prints figures; not a test.
 */
const rows = Number(process.env.BENCH_LEDGER_ROWS ?? 100_000);
const pending = Number(process.env.BENCH_PENDING ?? 20_000);
const samples = Number(process.env.BENCH_SAMPLES ?? 10);

const database = await provisionDatabase({ prefix: 'bench_overview', serverUrl: process.env.DATABASE_URL });
const pool = createPool(database.url, { max: 4, applicationName: 'bench-overview-writer' });
const db = createDb(pool);
try {
  const { migrateDatabase } = await import('@/db/migrate');
  await migrateDatabase(database.url);
  const client = await pool.connect();
  try {
    console.log(`seeding ${rows} sent notices over 7 d, ${pending} pending jobs …`);
    await client.query(
      `
      insert into reminder_jobs (notice_key, notice_type, identity, subject_id, recipient_email, due_at, deadline_at, state, next_attempt_at, source, channel, recipient_phone)
      select 'k' || g, 'renewal_notice_t72', jsonb_build_object('subscription_id', 's' || g, 'period_start', '2026-12-01'), 's' || g,
        'u' || g || '@example.com', now() - (g % 604800) * interval '1 second', now() + interval '1 day',
        'sent', now(), 'bench', case when g % 10 = 0 then 'sms' else 'email' end, case when g % 10 = 0 then '+14155550100' else null end
      from generate_series(1, $1) g`,
      [rows],
    );
    await client.query(`
      insert into notice_ledger (notice_key, notice_type, identity, job_id, state, claimed_at, sent_at, updated_at)
      select j.notice_key, j.notice_type, j.identity, j.id, 'sent', j.due_at, j.due_at, j.due_at from reminder_jobs j`);
    await client.query(`
      insert into delivery_attempts (job_id, notice_key, worker_id, started_at, finished_at, outcome, claim_to_commit_ms, error_class)
      select j.id, j.notice_key, 'w1', j.due_at, j.due_at, 'sent', 5 + (random() * 40)::int, null from reminder_jobs j`);
    await client.query(`
      insert into delivery_attempts (job_id, notice_key, worker_id, started_at, finished_at, outcome, error_class)
      select j.id, j.notice_key, 'w1', j.due_at - interval '1 minute', j.due_at, 'retryable_failure', 'smtp_451' from reminder_jobs j where random() < 0.05`);
    await client.query(`
      insert into provider_events (provider, event_id, event_type, raw_type, notice_key, occurred_at, received_at)
      select case when j.channel = 'sms' then 'twilio' else 'generic' end, 'e' || j.notice_key, 'delivered', 'delivered', j.notice_key, j.due_at, j.due_at + interval '5 seconds'
      from reminder_jobs j where random() < 0.8`);
    await client.query(
      `
      insert into reminder_jobs (notice_key, notice_type, identity, subject_id, recipient_email, due_at, deadline_at, state, next_attempt_at, source)
      select 'p' || g, 'renewal_notice_t72', jsonb_build_object('subscription_id', 'p' || g, 'period_start', '2026-12-01'), 'p' || g,
        'p' || g || '@example.com', now() + (g % 259200 - 3600) * interval '1 second', now() + interval '4 days', 'pending', now(), 'bench'
      from generate_series(1, $1) g`,
      [pending],
    );
    await client.query(`
      insert into notice_ledger (notice_key, notice_type, identity, state, claimed_at)
      select 'c' || g, 'renewal_notice_t72', '{}'::jsonb, 'claimed', now() - interval '1 hour' from generate_series(1, 300) g`);
    await client.query('vacuum analyze');

    const now = new Date();
    const explain = async (label: string, text: string, values: unknown[]) => {
      const result = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off, timing on) ${text}`, values);
      console.log(`\n--- ${label}\n${result.rows.map((row) => row['QUERY PLAN']).join('\n')}`);
    };
    await explain(
      'hand-over vs delivery (the shared definition), last hour',
      `with handed as (
        select distinct a.notice_key, j.channel from delivery_attempts a
        cross join lateral (select 1 from notice_ledger l where l.notice_key = a.notice_key and l.state = 'sent' limit 1) l
        cross join lateral (select channel from reminder_jobs j where j.id = a.job_id limit 1) j
        where a.started_at >= $1 and a.started_at < $2 and a.outcome = 'sent'
      ), per_channel as (
        select h.channel, count(*)::int as handed_over,
          count(*) filter (where exists (select 1 from provider_events e where e.notice_key = h.notice_key and e.event_type = 'delivered'))::int as delivered
        from handed h group by 1
      )
      select p.channel, p.handed_over, p.delivered, p.delivered > 0 or exists (
        select 1 from provider_events e where e.received_at >= $3 and e.event_type = 'delivered' and e.notice_key is not null
          and e.provider = any(case when p.channel = 'sms' then array['twilio'] else array['generic'] end) order by e.received_at desc limit 1) as evidence
      from per_channel p`,
      [new Date(now.getTime() - DELIVERY_WINDOW_MS), now, new Date(now.getTime() - DELIVERY_EVIDENCE_LOOKBACK_MS)],
    );
    await explain(
      'evidence probe when a channel has none (worst case: reads the lookback)',
      `select exists (select 1 from provider_events e where e.received_at >= $1 and e.event_type = 'delivered' and e.notice_key is not null
        and (e.provider = 'twilio') = false and e.provider = 'nobody' order by e.received_at desc limit 1)`,
      [new Date(now.getTime() - DELIVERY_EVIDENCE_LOOKBACK_MS)],
    );
    await explain(
      'attempts of the last minute: count, p50/p99',
      `select count(*) as n, percentile_cont(array[0.5, 0.99]) within group (order by claim_to_commit_ms) as p
       from delivery_attempts where started_at >= $1 and started_at < $2`,
      [new Date(now.getTime() - 90_000), new Date(now.getTime() - 30_000)],
    );
    await explain(
      'failures of the last minute by class',
      `select coalesce(error_class, outcome), count(*) from delivery_attempts
       where started_at >= $1 and started_at < $2 and outcome in ('retryable_failure', 'permanent_failure', 'unknown') group by 1`,
      [new Date(now.getTime() - 90_000), new Date(now.getTime() - 30_000)],
    );
  } finally {
    client.release();
  }

  const settings = {
    everyMs: 1_000,
    retentionMs: 8 * 86_400_000,
    quarantineAfterMs: 15 * 60_000,
    emailProvider: 'smtp',
    noticeTypes: ['renewal_notice_t72', 'renewal_notice_t24', 'payment_recovery'],
  };
  const times: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const outcome = await writeOverviewSample(db, { now: new Date(Date.now() + i * 60_000), settings });
    if (outcome.written) times.push(outcome.ms);
  }
  times.sort((a, b) => a - b);
  console.log(`\nwhole sample (${times.length} written): median ${times[Math.floor(times.length / 2)] ?? NaN} ms, max ${times[times.length - 1] ?? NaN} ms`);
  // A week of samples at one a minute (~20 rows each), then the 7 d chart's read, as a page view makes it.
  await pool.query(`
    insert into overview_samples (at, series, key, value)
    select date_trunc('minute', now()) - g * interval '1 minute' - interval '1 hour', s.series, s.key, random() * 100
    from generate_series(1, 8 * 1440) g
    cross join (values ('pending', 'overdue'), ('pending', 'lt_1h'), ('pending', 'h1_6'), ('pending', 'h6_24'), ('pending', 'd1_3'), ('pending', 'gt_3d'),
      ('quarantined', ''), ('attempts', ''), ('latency_p50', ''), ('latency_p99', ''), ('failures', 'smtp_451'), ('failures', 'connect_failed'),
      ('delivery_measured', ''), ('handed_over', 'email/smtp'), ('delivered', 'email/smtp'), ('gap', 'email/smtp'),
      ('handed_over', 'sms/twilio'), ('delivered', 'sms/twilio'), ('gap', 'sms/twilio'), ('writer_ms', '')) as s(series, key)
    on conflict do nothing`);
  await pool.query('vacuum analyze overview_samples');
  const { readBinnedSamples } = await import('@/db/queries/overview-samples');
  const { sampleBucketMs } = await import('@/lib/api/console/overview');
  for (const [range, rangeMs] of [
    ['1h', 3_600_000],
    ['24h', 86_400_000],
    ['7d', 7 * 86_400_000],
  ] as const) {
    const reads: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const started = performance.now();
      await readBinnedSamples(db, { from: new Date(Date.now() - rangeMs), to: new Date(), bucketMs: sampleBucketMs[range] });
      reads.push(performance.now() - started);
    }
    reads.sort((x, y) => x - y);
    console.log(`chart read ${range}: median ${Math.round(reads[2] ?? NaN)} ms`);
  }
  const levelsPlan = await pool.query<{ 'QUERY PLAN': string }>(
    `explain (analyze, costs off) with instants as (
      select date_bin(interval '15 minutes', at, 'epoch'::timestamptz) as bucket, max(at) as at from overview_samples
      where at >= now() - interval '1 day' and at < now() and series = 'quarantined' group by 1)
    select i.bucket, s.series, s.key, s.value from instants i cross join lateral (
      select series, key, value from overview_samples s where s.at = i.at
        and s.series = any(array['pending', 'quarantined', 'delivery_measured', 'handed_over', 'delivered', 'gap']) limit 1000) s`,
  );
  console.log(`\n--- 24 h chart levels\n${levelsPlan.rows.map((row) => row['QUERY PLAN']).join('\n')}`);
  const hot = new pg.Client({ connectionString: database.url });
  await hot.connect();
  const size = await hot.query<{ n: string }>('select count(*)::text as n from overview_samples');
  console.log(`overview_samples rows after ${times.length} samples: ${size.rows[0]?.n ?? '?'}`);
  await hot.end();
} finally {
  await pool.end();
  await database.release();
}
