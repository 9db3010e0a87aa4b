import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAttempts } from '@/db/queries/reports';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { duplicateCauses } from '@/lib/api/console/reports';
import { parseCsv } from '@/lib/replay/csv';
import { buildReport, rateSeries, reportCsv, reportTables } from './duplicate-report';
import { loadDuplicateReport } from './report';

let t: TestDatabase;
const QA = 15 * 60_000;
const day1 = '2026-11-02';
const day2 = '2026-11-03';
const at = (day: string, hour: number) => new Date(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);

async function ledger(
  type: string,
  claimedAt: Date,
  extra: { state?: string; resolvedAt?: Date | null; source?: string } = {},
): Promise<{ key: string; jobId: string }> {
  const key = randomBytes(32).toString('hex');
  const job = await t.pool.query<{ id: string }>(
    `insert into reminder_jobs (notice_key, notice_type, identity, subject_id, recipient_email, due_at, deadline_at, next_attempt_at, source, state)
     values ($1, $2, '{}', 's', 'a@b.test', $3, $3, $3, 'test', 'sent') returning id`,
    [key, type, claimedAt],
  );
  const jobId = job.rows[0]?.id ?? '';
  const state = extra.state ?? 'sent';
  await t.pool.query(
    `insert into notice_ledger (notice_key, notice_type, identity, job_id, state, claimed_at, sent_at, resolved_at, resolution, source)
     values ($1, $2, '{}', $3, $4, $5, $6, $7, $8, $9)`,
    [
      key,
      type,
      jobId,
      state,
      claimedAt,
      state === 'sent' ? claimedAt : null,
      extra.resolvedAt ?? null,
      extra.resolvedAt ? 'operator:confirm_sent' : null,
      extra.source ?? 'worker',
    ],
  );
  return { key, jobId };
}

async function attempt(target: { key: string; jobId: string }, startedAt: Date, outcome: string, detail: string | null, batchId: string | null = null) {
  await t.pool.query(
    'insert into delivery_attempts (job_id, notice_key, worker_id, started_at, outcome, detail, batch_id) values ($1, $2, $3, $4, $5, $6, $7)',
    [target.jobId, target.key, 'w', startedAt, outcome, detail, batchId],
  );
}

beforeAll(async () => {
  t = await createTestDatabase();
  // Day 1: 3 t72 claims, 1 payment claim, 1 backfill (not a claim minted).
  const a = await ledger('renewal_notice_t72', at(day1, 8));
  const b = await ledger('renewal_notice_t72', at(day1, 9));
  await ledger('renewal_notice_t72', at(day1, 10));
  const p = await ledger('payment_recovery', at(day1, 11));
  await ledger('payment_recovery', at(day1, 12), { source: 'backfill' });
  await attempt(a, at(day1, 9), 'suppressed_duplicate', 'ledger_claimed');
  await attempt(a, at(day1, 10), 'discarded', 'job_sent');
  await attempt(b, at(day1, 10), 'discarded', 'job_sent', 'replay-x');
  await attempt(b, at(day1, 11), 'suppressed_duplicate', 'queue_redelivery');
  await attempt(p, at(day1, 13), 'suppressed_duplicate', 'producer_retry');
  await attempt(p, at(day1, 14), 'would_suppress', 'ledger_sent');
  await attempt(p, at(day1, 15), 'sent', null);
  // Day 2: 1 claim, a duplicate; quarantine: one resolved after 45 min in quarantine, one still open.
  const c = await ledger('renewal_notice_t24', at(day2, 8));
  await attempt(c, at(day2, 9), 'suppressed_duplicate', 'ledger_sent');
  await ledger('renewal_notice_t24', at(day2, 9), { state: 'released', resolvedAt: new Date(at(day2, 9).getTime() + QA + 45 * 60_000) });
  await ledger('renewal_notice_t24', at(day2, 10), { state: 'claimed' });
  // A claim resolved inside the window never entered quarantine.
  await ledger('renewal_notice_t24', at(day2, 11), { state: 'sent', resolvedAt: new Date(at(day2, 11).getTime() + 60_000) });
  await t.pool.query(
    "insert into audit_log (actor, action, target_type, target_id, reason, at) values ('o@x', 'quarantine.release', 'notice', 'k', 'r', $1), ('o@x', 'replay.request', 'replay', 'b', 'r', $1)",
    [at(day2, 10)],
  );
  // Outside the range: ignored.
  const outside = await ledger('renewal_notice_t72', at('2026-10-01', 8));
  await attempt(outside, at('2026-10-01', 9), 'discarded', 'job_sent');
});

afterAll(async () => {
  await t?.drop();
});

describe('cause classification (the one SQL CASE)', () => {
  it('classifies replay, named causes, discards and claim conflicts', async () => {
    const cases = [
      { outcome: 'discarded', batchId: 'replay-1', detail: 'job_sent', want: 'replay' },
      { outcome: 'suppressed_duplicate', batchId: 'replay-1', detail: 'ledger_claimed', want: 'replay' },
      { outcome: 'suppressed_duplicate', batchId: null, detail: 'queue_redelivery', want: 'queue_redelivery' },
      { outcome: 'suppressed_duplicate', batchId: null, detail: 'concurrent_worker', want: 'concurrent_worker' },
      { outcome: 'suppressed_duplicate', batchId: null, detail: 'replay', want: 'replay' },
      { outcome: 'suppressed_duplicate', batchId: null, detail: 'producer_retry', want: 'producer_retry' },
      { outcome: 'discarded', batchId: null, detail: 'job_cancelled', want: 'queue_redelivery' },
      { outcome: 'discarded', batchId: null, detail: null, want: 'queue_redelivery' },
      { outcome: 'suppressed_duplicate', batchId: null, detail: 'ledger_claimed', want: 'concurrent_worker' },
      { outcome: 'would_suppress', batchId: null, detail: 'ledger_sent', want: 'concurrent_worker' },
      { outcome: 'suppressed_duplicate', batchId: null, detail: 'jobXsent', want: 'unclassified' },
      { outcome: 'suppressed_duplicate', batchId: null, detail: null, want: 'unclassified' },
    ];
    expect(await classifyAttempts(t.db, { cases })).toEqual(cases.map((c) => c.want));
    expect(duplicateCauses).toEqual(expect.arrayContaining([...new Set(cases.map((c) => c.want))]));
  });
});

describe('duplicate-rate report', () => {
  it('equals the figures computed independently in SQL, by day', async () => {
    const report = await loadDuplicateReport(t.db, { query: { granularity: 'day', from: day1, to: '2026-11-04' }, quarantineAfterMs: QA });
    const independent = await t.pool.query<{ day: string; type: string; claims: number; dups: number; shadow: number }>(`
      with c as (select to_char(claimed_at at time zone 'UTC', 'YYYY-MM-DD') as day, notice_type as type, count(*)::int as n
                 from notice_ledger where source = 'worker' and claimed_at >= '2026-11-02' and claimed_at < '2026-11-04' group by 1, 2),
           d as (select to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD') as day, j.notice_type as type,
                        count(*) filter (where a.outcome in ('suppressed_duplicate', 'discarded'))::int as dups,
                        count(*) filter (where a.outcome = 'would_suppress')::int as shadow
                 from delivery_attempts a join reminder_jobs j on j.id = a.job_id
                 where a.started_at >= '2026-11-02' and a.started_at < '2026-11-04' group by 1, 2)
      select coalesce(c.day, d.day) as day, coalesce(c.type, d.type) as type, coalesce(c.n, 0) as claims, coalesce(d.dups, 0) as dups, coalesce(d.shadow, 0) as shadow
      from c full join d on c.day = d.day and c.type = d.type`);
    const expected = independent.rows
      .map((r) => ({ period: r.day, noticeType: r.type, claimsMinted: r.claims, duplicates: r.dups, wouldDuplicate: r.shadow }))
      .sort((x, y) => `${x.period}${x.noticeType}`.localeCompare(`${y.period}${y.noticeType}`));
    const actual = report.rows
      .map((r) => ({ period: r.period, noticeType: r.noticeType, claimsMinted: r.claimsMinted, duplicates: r.duplicates, wouldDuplicate: r.wouldDuplicate }))
      .sort((x, y) => `${x.period}${x.noticeType}`.localeCompare(`${y.period}${y.noticeType}`));
    expect(actual).toEqual(expected);

    const t72 = report.rows.find((r) => r.period === day1 && r.noticeType === 'renewal_notice_t72');
    expect(t72).toMatchObject({
      claimsMinted: 3,
      duplicates: 4,
      byCause: { concurrent_worker: 1, queue_redelivery: 2, replay: 1, producer_retry: 0, unclassified: 0 },
    });
    expect(t72?.rate).toBeCloseTo(4 / 3);
    const payments = report.rows.find((r) => r.period === day1 && r.noticeType === 'payment_recovery');
    expect(payments).toMatchObject({ claimsMinted: 1, duplicates: 1, wouldDuplicate: 1, byCause: { producer_retry: 1 } });
    expect(report.total).toMatchObject({ claimsMinted: 8, duplicates: 6, wouldDuplicate: 1 });

    expect(report.quarantine).toEqual([
      { period: day2, inflow: 2, resolved: 1, open: 1, medianMinutesToResolve: 45, maxMinutesToResolve: 45, operatorActions: 1 },
    ]);
  });

  it('groups by ISO week', async () => {
    const report = await loadDuplicateReport(t.db, { query: { granularity: 'week', from: '2026-10-26', to: '2026-11-09' }, quarantineAfterMs: QA });
    // 2026-11-02 is a Monday: both days fall in one week.
    expect(new Set(report.rows.map((r) => r.period))).toEqual(new Set(['2026-11-02']));
    expect(report.total).toMatchObject({ claimsMinted: 8, duplicates: 6 });
  });

  it('exports exactly the on-screen tables as CSV', async () => {
    const report = await loadDuplicateReport(t.db, { query: { granularity: 'day', from: day1, to: '2026-11-04' }, quarantineAfterMs: QA });
    const parsed = parseCsv(reportCsv(report)).map((r) => r.fields);
    const screen = reportTables(report);
    const fromCsv: string[][] = parsed.filter((row) => row.length > 1);
    expect(fromCsv).toEqual(screen.flatMap((table) => [table.header, ...table.rows]));
    expect(parsed.filter((row) => row.length === 1).map((row) => row[0])).toEqual([
      'Duplicate-rate report 2026-11-02 to 2026-11-04 by day',
      'Duplicates suppressed',
      'By channel',
      'Quarantine',
    ]);
  });
});

describe('buildReport (pure)', () => {
  it('splits claims and duplicates by channel (a row without one is email); shadow refusals are not duplicates', () => {
    const report = buildReport({
      range: { granularity: 'day', from: day1, to: day2 },
      claims: [
        { period: day1, noticeType: 'a', claims: 100 },
        { period: day1, noticeType: 'payment_recovery', claims: 50, channel: 'sms' },
      ],
      duplicates: [
        { period: day1, noticeType: 'a', cause: 'replay', shadow: false, count: 2 },
        { period: day1, noticeType: 'payment_recovery', cause: 'queue_redelivery', shadow: false, count: 5, channel: 'sms' },
        { period: day1, noticeType: 'payment_recovery', cause: 'queue_redelivery', shadow: true, count: 7, channel: 'sms' },
      ],
      quarantine: [],
      actions: [],
    });
    expect(report.channels).toEqual([
      { channel: 'email', claimsMinted: 100, duplicates: 2, rate: 0.02 },
      { channel: 'sms', claimsMinted: 50, duplicates: 5, rate: 0.1 },
    ]);
    expect(reportTables(report).find((table) => table.title === 'By channel')?.rows).toEqual([
      ['Email', '100', '2', '2.00 %'],
      ['SMS', '50', '5', '10.00 %'],
    ]);
  });

  it('rates are duplicates per claim, absent without claims, and totals add up', () => {
    const report = buildReport({
      range: { granularity: 'day', from: day1, to: day2 },
      claims: [{ period: day1, noticeType: 'a', claims: 200 }],
      duplicates: [
        { period: day1, noticeType: 'a', cause: 'replay', shadow: false, count: 3 },
        { period: day1, noticeType: 'b', cause: 'something_new', shadow: false, count: 1 },
        { period: day1, noticeType: 'a', cause: 'queue_redelivery', shadow: true, count: 5 },
      ],
      quarantine: [],
      actions: [{ period: day1, action: 'quarantine.release', count: 2 }],
    });
    expect(report.rows.map((r) => [r.noticeType, r.rate, r.byCause.unclassified, r.wouldDuplicate])).toEqual([
      ['a', 0.015, 0, 5],
      ['b', null, 1, 0],
    ]);
    expect(report.total).toMatchObject({ claimsMinted: 200, duplicates: 4, wouldDuplicate: 5, rate: 0.02 });
    expect(reportTables(report)[0]?.rows.at(-1)).toContain('2.00 %');
    expect(report.quarantine).toEqual([
      { period: day1, inflow: 0, resolved: 0, open: 0, medianMinutesToResolve: null, maxMinutesToResolve: null, operatorActions: 2 },
    ]);
  });

  it('the rate over time sums every notice type per period, oldest first, and has no rate without claims', () => {
    const report = buildReport({
      range: { granularity: 'day', from: day1, to: day2 },
      claims: [
        { period: day2, noticeType: 'a', claims: 50 },
        { period: day1, noticeType: 'a', claims: 100 },
        { period: day1, noticeType: 'b', claims: 100 },
      ],
      duplicates: [
        { period: day1, noticeType: 'a', cause: 'replay', shadow: false, count: 3 },
        { period: day1, noticeType: 'b', cause: 'queue_redelivery', shadow: false, count: 1 },
        { period: day2, noticeType: 'a', cause: 'replay', shadow: true, count: 9 },
      ],
      quarantine: [],
      actions: [],
    });
    expect(rateSeries(report)).toEqual([
      { period: day1, claimsMinted: 200, duplicates: 4, ratePercent: 2 },
      { period: day2, claimsMinted: 50, duplicates: 0, ratePercent: 0 },
    ]);
    const [first] = report.rows;
    if (!first) throw new Error('no row');
    expect(rateSeries({ ...report, rows: [{ ...first, claimsMinted: 0 }] })[0]?.ratePercent).toBeNull();
  });
});
