import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertJob } from '@/e2e/fixtures/console-data';
import { insertClaimedNotice } from '@/testing/provider-events';
import { deliveryAttempts } from '@/db/schema';
import { loadOverviewCharts } from '@/lib/console/overview-charts';
import { createLogger } from '@/lib/log';
import { ATTEMPT_LAG_MS, OVERVIEW_WRITER_LOCK, startOverviewWriter, writeOverviewSample, type OverviewSampleSettings } from './overview-writer';

/**
 * The overview's sample writer against real PostgreSQL: what one sample holds (checked against
 * plain SQL), that the levels move between samples as the queue drains and a claim goes to
 * quarantine, that several workers write one set of points, and that old samples are pruned.
 */

const H = 3_600_000;
const secret = 'test-secret-0123456789abcdef0123456789abcdef';
let t: TestDatabase;
let serial = 0;

const settings: OverviewSampleSettings = {
  everyMs: 60_000,
  retentionMs: 8 * 86_400_000,
  quarantineAfterMs: 15 * 60_000,
  emailProvider: 'smtp',
  noticeTypes: ['renewal_notice_t72', 'renewal_notice_t24'],
};

async function addPending(dueAt: Date): Promise<string> {
  serial += 1;
  const { key } = await insertJob(t.db, {
    fact: { type: 'renewal_notice_t72', identity: { subscription_id: `sub_w_${serial}`, period_start: '2026-12-01' }, revision: 0 },
    secret,
    recipientEmail: `w${serial}@example.com`,
    dueAt,
    deadlineAt: new Date(dueAt.getTime() + 30 * H),
  });
  return key;
}

async function samplesAt(at: Date): Promise<Record<string, number>> {
  const result = await t.pool.query<{ series: string; key: string; value: number }>('select series, key, value from overview_samples where at = $1', [at]);
  return Object.fromEntries(result.rows.map((row) => [row.key ? `${row.series}:${row.key}` : row.series, Number(row.value)]));
}

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('one sample', () => {
  it('holds pending by due bucket, the quarantine count, p50/p99 and failures by class of the interval, as plain SQL counts them', async () => {
    const now = new Date();
    for (const offset of [-2 * H, -H, 0.5 * H, 3 * H, 30 * H, 100 * H]) await addPending(new Date(now.getTime() + offset));
    await insertClaimedNotice(t.db, { noticeKey: 'k_quarantined_1', email: 'q@example.com', claimedAt: new Date(now.getTime() - 20 * 60_000) });
    // Attempts inside the sampled interval (it ends ATTEMPT_LAG_MS before the sample), and one after it.
    const inside = new Date(now.getTime() - ATTEMPT_LAG_MS - 10_000);
    const attempt = (
      outcome: 'sent' | 'retryable_failure' | 'permanent_failure',
      extra: { claimToCommitMs?: number; errorClass?: string; startedAt?: Date },
    ) => ({
      noticeKey: `k_attempt_${(serial += 1)}`,
      workerId: 'w-test',
      outcome,
      startedAt: extra.startedAt ?? inside,
      claimToCommitMs: extra.claimToCommitMs ?? null,
      errorClass: extra.errorClass ?? null,
    });
    await t.db
      .insert(deliveryAttempts)
      .values([
        ...Array.from({ length: 99 }, () => attempt('sent', { claimToCommitMs: 10 })),
        attempt('sent', { claimToCommitMs: 5_000 }),
        attempt('retryable_failure', { errorClass: 'smtp_451' }),
        attempt('retryable_failure', { errorClass: 'smtp_451' }),
        attempt('permanent_failure', { errorClass: 'smtp_550' }),
        attempt('permanent_failure', { errorClass: 'smtp_550', startedAt: new Date(now.getTime() - 1_000) }),
      ]);

    expect(await writeOverviewSample(t.db, { now, settings })).toMatchObject({ written: true });
    const sample = await samplesAt(now);
    expect(sample).toMatchObject({
      'pending:overdue': 2,
      'pending:lt_1h': 1,
      'pending:h1_6': 1,
      'pending:h6_24': 0,
      'pending:d1_3': 1,
      'pending:gt_3d': 1,
      quarantined: 1,
      attempts: 103,
      claims: 103,
      duplicates: 0,
      would_suppress: 0,
      latency_p50: 10,
      'failures:smtp_451': 2,
      'failures:smtp_550': 1,
      delivery_measured: 0,
    });
    const p99 = await t.pool.query<{ p99: number }>(
      `select round(percentile_cont(0.99) within group (order by claim_to_commit_ms))::int as p99 from delivery_attempts where started_at < $1`,
      [new Date(now.getTime() - ATTEMPT_LAG_MS)],
    );
    expect(sample.latency_p99).toBe(p99.rows[0]?.p99);
    expect(sample.writer_ms).toBeGreaterThanOrEqual(0);
  });
});

describe('the charts move between samples', () => {
  it('as the queue drains and a claim is quarantined, the stored points follow', async () => {
    await t.db.execute(sql`delete from overview_samples`);
    const first = new Date(Date.now() + 10 * 60_000);
    expect(await writeOverviewSample(t.db, { now: first, settings })).toMatchObject({ written: true });
    const before = await samplesAt(first);

    // The worker drains the overdue jobs; a second claim goes stale.
    await t.db.execute(sql`update reminder_jobs set state = 'sent' where state = 'pending' and due_at < now()`);
    await insertClaimedNotice(t.db, { noticeKey: 'k_quarantined_2', email: 'q2@example.com', claimedAt: new Date(Date.now() - 30 * 60_000) });
    const second = new Date(first.getTime() + 60_000);
    expect(await writeOverviewSample(t.db, { now: second, settings })).toMatchObject({ written: true });

    const charts = await loadOverviewCharts(t.db, { now: new Date(second.getTime() + 1), range: '1h' });
    const sampled = charts.points.filter((point) => point.quarantined !== null);
    expect(sampled.length).toBeGreaterThanOrEqual(1);
    const last = sampled[sampled.length - 1];
    expect(last?.quarantined).toBe(2);
    expect(last?.pending?.overdue).toBe((before['pending:overdue'] ?? 0) - 2);
    expect(charts.sampledAt).toBe(second.toISOString());
  });
});

describe('several workers', () => {
  it('write one set of points: a held lock skips, and two at once write once', async () => {
    await t.db.execute(sql`delete from overview_samples`);
    const held = await t.pool.connect();
    try {
      await held.query('begin');
      await held.query('select pg_advisory_xact_lock($1)', [OVERVIEW_WRITER_LOCK]);
      expect(await writeOverviewSample(t.db, { now: new Date(), settings })).toEqual({ written: false, reason: 'locked' });
      await held.query('rollback');
    } finally {
      held.release();
    }
    expect((await t.pool.query('select 1 from overview_samples')).rowCount).toBe(0);

    const now = new Date();
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => writeOverviewSample(t.db, { now, settings })));
    expect(outcomes.filter((outcome) => outcome.written)).toHaveLength(1);
    const instants = await t.pool.query<{ n: number }>('select count(distinct at)::int as n from overview_samples');
    expect(instants.rows[0]?.n).toBe(1);
  });

  it('the timer in each of three workers writes one sample per period between them', async () => {
    await t.db.execute(sql`delete from overview_samples`);
    const logger = createLogger('overview-writer-test', 'silent');
    const handles = Array.from({ length: 3 }, () => startOverviewWriter({ db: t.db, settings: { ...settings, everyMs: 60_000 }, logger }));
    await Promise.all(handles.map((handle) => handle.stop()));
    const instants = await t.pool.query<{ n: number }>('select count(distinct at)::int as n from overview_samples');
    expect(instants.rows[0]?.n).toBe(1);
  });
});

describe('retention', () => {
  it('a sample older than OVERVIEW_SAMPLE_RETENTION is deleted by the next write; a younger one stays', async () => {
    const now = new Date(Date.now() + 60 * 60_000);
    const old = new Date(now.getTime() - settings.retentionMs - 1_000);
    const young = new Date(now.getTime() - settings.retentionMs + 60_000);
    await t.pool.query("insert into overview_samples (at, series, key, value) values ($1, 'quarantined', '', 7), ($2, 'quarantined', '', 8)", [old, young]);
    expect(await writeOverviewSample(t.db, { now, settings })).toMatchObject({ written: true });
    const left = await t.pool.query<{ at: Date }>("select at from overview_samples where series = 'quarantined' and value in (7, 8)");
    expect(left.rows.map((row) => row.at.toISOString())).toEqual([young.toISOString()]);
  });
});
