import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNoticeConfig } from '@/lib/windows/load-config';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { seedDemoEvents } from './business-events';

let t: TestDatabase;
const notices = loadNoticeConfig('config/notice-ledger.json');
const secret = 'seed-events-secret-0123456789abcdef';

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

describe('seedDemoEvents', () => {
  it('plans notices from business events across regions, records the gaps and the missed windows, and runs once', async () => {
    const now = new Date('2026-12-01T12:00:00Z');
    const summary = await seedDemoEvents(t.db, { secret, notices, now });
    expect(summary).toMatchObject({ events: 13, missed: 3 });
    expect(summary.gaps).toBeGreaterThanOrEqual(4);

    const regions = await t.pool.query<{ region: string }>(`select distinct region from business_events order by 1`);
    expect(regions.rows.map((row) => row.region)).toEqual(['DE', 'FR', 'IN', 'US-CA', 'US-IL', 'US-NY']);
    const required = await t.pool.query<{ notice_type: string; region: string }>(
      `select distinct notice_type, region from reminder_jobs where category = 'required' and state = 'pending' order by 1, 2`,
    );
    expect(required.rows).toEqual(
      expect.arrayContaining([
        { notice_type: 'auto_renewal_notice', region: 'US-CA' },
        { notice_type: 'auto_renewal_notice', region: 'US-IL' },
        { notice_type: 'auto_renewal_notice', region: 'FR' },
        { notice_type: 'pre_debit_notice', region: 'IN' },
        { notice_type: 'trial_conversion_notice', region: 'DE' },
      ]),
    );
    // Every planned job lies inside its window.
    const outside = await t.pool.query(`select id from reminder_jobs where window_earliest is not null and (due_at < window_earliest or due_at > deadline_at)`);
    expect(outside.rows).toEqual([]);
    const gaps = await t.pool.query<{ n: number }>(`select count(*)::int as n from unplanned_notices where category = 'required' and resolved_at is null`);
    expect(gaps.rows[0]?.n).toBe(summary.gaps);
    const missed = await t.pool.query<{ n: number }>(
      `select count(*)::int as n from reminder_jobs j join delivery_attempts a on a.job_id = j.id where j.state = 'suppressed' and j.deadline_at < $1 and a.outcome = 'suppressed_policy'`,
      [now],
    );
    expect(missed.rows[0]?.n).toBe(3);

    expect(await seedDemoEvents(t.db, { secret, notices, now })).toEqual({ events: 0, planned: 0, gaps: 0, missed: 0 });
  });
});
