import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedWindowsScenario, type WindowsScenario } from '@/e2e/fixtures/windows-data';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { loadAtRiskPage, loadGapPage, loadMissedPage, loadNoticeConfigView, loadWindowsSummary, resolveComplianceGap } from './windows';

/** The Windows page's data: at risk soonest first, missed newest first, open required gaps, and resolving one exactly once. */

const H = 3_600_000;
let t: TestDatabase;
let scenario: WindowsScenario;
const now = new Date();

beforeAll(async () => {
  t = await createTestDatabase();
  scenario = await seedWindowsScenario(t.db, { tag: '-unit', now });
});
afterAll(async () => {
  await t.drop();
});

describe('windows summary', () => {
  it('counts at risk, missed in 24 h and 7 d, and open required gaps by type × region; a courtesy unplanned notice is no gap', async () => {
    const summary = await loadWindowsSummary(t.db, { now, atRiskWithinMs: 24 * H });
    expect(summary.totals).toEqual({ atRisk: 3, missed24h: 1, missed7d: 2, gaps: 3 });
    const row = (noticeType: string, region: string) => summary.rows.find((entry) => entry.noticeType === noticeType && entry.region === region);
    expect(row('auto_renewal_notice', 'US-CA')).toMatchObject({ atRisk: 1, gaps: 1, category: 'required' });
    expect(row('auto_renewal_notice', 'US-NY')).toMatchObject({ missed24h: 1, missed7d: 1 });
    expect(row('renewal_notice_t72', 'US-CA')).toMatchObject({ missed24h: 0, missed7d: 1, gaps: 0 });
  });
});

describe('lists', () => {
  it('at risk: window closing soonest first, with window, region, rule ids and state; paginated by keyset', async () => {
    const first = await loadAtRiskPage(t.db, { now, atRiskWithinMs: 24 * H, input: {}, limit: 2 });
    expect(first.rows.map((row) => row.subjectId)).toEqual(scenario.atRiskSubjects.slice(0, 2));
    expect(first.rows[0]).toMatchObject({ region: 'US-CA', ruleIds: ['US-CA/arl-annual@1'], state: 'pending', category: 'required' });
    expect(first.rows[1]?.state).toBe('claimed');
    expect(first.next).not.toBeNull();
    const second = await loadAtRiskPage(t.db, { now, atRiskWithinMs: 24 * H, input: first.next ?? {}, limit: 2 });
    expect(second.rows.map((row) => row.subjectId)).toEqual(scenario.atRiskSubjects.slice(2));
    expect(second.next).toBeNull();
  });

  it('missed: newest first', async () => {
    const page = await loadMissedPage(t.db, { now, input: {} });
    expect(page.rows.map((row) => row.subjectId)).toEqual(scenario.missedSubjects);
    expect(page.rows[0]?.suppressionReason).toBe('window_missed');
  });
});

describe('resolving a compliance gap', () => {
  it('marks it, writes an audit row with before and after, and refuses a second resolution without writing', async () => {
    const gap = scenario.gaps[0];
    if (!gap) throw new Error('no gap seeded');
    const resolved = await resolveComplianceGap(t.db, { id: gap.id, reason: 'sent by registered post', actor: 'operator@example.com' });
    expect(resolved.ok).toBe(true);
    const open = await loadGapPage(t.db, { now, input: {} });
    expect(open.rows.map((row) => row.id)).not.toContain(gap.id);
    expect(open.rows).toHaveLength(2);
    const audit = await t.pool.query<{ action: string; before: Record<string, unknown>; after: Record<string, unknown>; reason: string }>(
      `select action, before, after, reason from audit_log where target_type = 'unplanned_notice' and target_id = $1`,
      [String(gap.id)],
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({
      action: 'gap.resolve',
      reason: 'sent by registered post',
      before: { resolvedAt: null },
      after: { resolvedBy: 'operator@example.com' },
    });

    const again = await resolveComplianceGap(t.db, { id: gap.id, reason: 'second try', actor: 'other@example.com' });
    expect(again).toMatchObject({ ok: false, refusal: { kind: 'conflict' } });
    const rows = await t.pool.query(`select resolved_by, resolution from unplanned_notices where id = $1`, [gap.id]);
    expect(rows.rows[0]).toEqual({ resolved_by: 'operator@example.com', resolution: 'sent by registered post' });
    expect((await t.pool.query(`select 1 from audit_log where target_id = $1`, [String(gap.id)])).rowCount).toBe(1);
  });

  it('refuses an unknown id and a courtesy unplanned notice as not found', async () => {
    expect(await resolveComplianceGap(t.db, { id: 987_654, reason: 'nothing here', actor: 'x@example.com' })).toMatchObject({
      ok: false,
      refusal: { kind: 'not_found' },
    });
    const courtesy = await t.pool.query<{ id: string }>(`select id from unplanned_notices where category = 'courtesy'`);
    const id = Number(courtesy.rows[0]?.id);
    expect(await resolveComplianceGap(t.db, { id, reason: 'not a gap', actor: 'x@example.com' })).toMatchObject({ ok: false, refusal: { kind: 'not_found' } });
  });
});

describe('notice configuration view', () => {
  it('lists the shipped notice types and rules with their sources', () => {
    const view = loadNoticeConfigView();
    expect(view.noticeTypes.map((type) => type.name)).toEqual(expect.arrayContaining(['renewal_notice_t72', 'auto_renewal_notice', 'pre_debit_notice']));
    expect(view.rules.find((rule) => rule.id === 'US-CA/arl-annual')).toMatchObject({ jurisdiction: 'US-CA', sourceUrl: expect.stringMatching(/^https:/) });
  });
});
