import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertJob } from '@/e2e/fixtures/console-data';
import { seedWindowsScenario } from '@/e2e/fixtures/windows-data';
import { renderConsoleMetrics } from '@/lib/console/metrics';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { scrapeWorkerMetrics } from '@/testing/metrics-endpoints';
import { retryJob } from '@/db/queries/jobs';
import { loadAtRiskPage } from '@/lib/console/windows';
import { insertTestJob } from '@/testing/jobs';

/**
 * Windows at risk (due or claimed, not sent, closing within WINDOW_AT_RISK_WITHIN) and open compliance gaps, by notice type × region, as both /metrics endpoints
 * serve them: read from the database at scrape time, the same figure either way.
 */

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
const H = 3_600_000;
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  const now = new Date();
  await seedWindowsScenario(t.db, { tag: '-metrics', now });
  const renewal = (subscription: string) => ({
    type: 'renewal_notice_t72' as const,
    identity: { subscription_id: subscription, period_start: '2026-12-01' },
    revision: 0,
  });
  // Not at risk: closes beyond 24 h; closed already (the send path will call it missed); sent.
  await insertJob(t.db, {
    fact: renewal('far'),
    secret,
    recipientEmail: 'far@example.com',
    dueAt: new Date(now.getTime() + H),
    deadlineAt: new Date(now.getTime() + 30 * H),
  });
  await insertJob(t.db, {
    fact: renewal('past'),
    secret,
    recipientEmail: 'past@example.com',
    dueAt: new Date(now.getTime() - 3 * H),
    deadlineAt: new Date(now.getTime() - H),
  });
  await insertJob(t.db, {
    fact: renewal('sent'),
    secret,
    recipientEmail: 'sent@example.com',
    dueAt: new Date(now.getTime() - H),
    deadlineAt: new Date(now.getTime() + H),
    state: 'sent',
  });
  // Not due yet, though its window closes soon: scheduled, not late.
  await insertJob(t.db, {
    fact: renewal('notdue'),
    secret,
    recipientEmail: 'notdue@example.com',
    dueAt: new Date(now.getTime() + H / 2),
    deadlineAt: new Date(now.getTime() + 2 * H),
  });
  // At risk, scheduled without a region: counted under region="none".
  await insertJob(t.db, {
    fact: renewal('soon'),
    secret,
    recipientEmail: 'soon@example.com',
    dueAt: new Date(now.getTime() - H),
    deadlineAt: new Date(now.getTime() + 2 * H),
  });
});
afterAll(async () => {
  await t.drop();
});

function series(text: string, name: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}\\{notice_type="([^"]+)",region="([^"]*)"\\} (\\S+)$`).exec(line);
    if (match) found[`${match[1] ?? ''} ${match[2] ?? ''}`] = Number(match[3]);
  }
  return found;
}

const expectedAtRisk = { 'auto_renewal_notice US-CA': 1, 'renewal_notice_t24 FR': 1, 'pre_debit_notice IN': 1, 'renewal_notice_t72 none': 1 };
const expectedGaps = { 'auto_renewal_notice US-CA': 1, 'auto_renewal_notice FR': 1, 'auto_renewal_notice US-IL': 1 };

describe('send-window gauges', () => {
  it('the worker serves pending and claimed notices closing within 24 h, and open required gaps, by type × region', async () => {
    const text = await scrapeWorkerMetrics(t.db);
    expect(series(text, 'notice_ledger_window_at_risk')).toEqual(expectedAtRisk);
    expect(series(text, 'notice_ledger_compliance_gaps')).toEqual(expectedGaps);
  });

  it('the console serves the same figures; a shorter WINDOW_AT_RISK_WITHIN counts fewer', async () => {
    const text = await renderConsoleMetrics(t.db, { quarantineAfterMs: 15 * 60_000, recountLater: () => undefined });
    expect(series(text, 'notice_ledger_window_at_risk')).toEqual(expectedAtRisk);
    expect(series(text, 'notice_ledger_compliance_gaps')).toEqual(expectedGaps);
    const narrow = await renderConsoleMetrics(t.db, { quarantineAfterMs: 15 * 60_000, windowAtRiskWithinMs: 4 * H, recountLater: () => undefined });
    expect(series(narrow, 'notice_ledger_window_at_risk')).toEqual({ 'auto_renewal_notice US-CA': 1, 'renewal_notice_t72 none': 1 });
  });

  it('a resolved gap leaves the gauge', async () => {
    await t.pool.query("update unplanned_notices set resolved_at = now(), resolved_by = 't', resolution = 'sent by post' where region = 'FR'");
    const text = await scrapeWorkerMetrics(t.db);
    expect(series(text, 'notice_ledger_compliance_gaps')).toEqual({ 'auto_renewal_notice US-CA': 1, 'auto_renewal_notice US-IL': 1 });
  });
});

describe('a required notice retrying past MAX_ATTEMPTS', () => {
  it('is at risk whatever its deadline, on both /metrics and the Windows page; fewer attempts or a courtesy notice are not', async () => {
    const retried = async (category: 'required' | 'courtesy', attempts: number) => {
      const job = await insertTestJob(t.db, { category, deadlineAt: new Date(Date.now() + 72 * H) });
      for (let attempt = 0; attempt < attempts; attempt += 1) {
        await retryJob(t.db, { jobId: job.id, nextAttemptAt: new Date(Date.now() + 60_000), errorClass: 'connect_failed' });
      }
      return job;
    };
    const atRisk = await retried('required', 8);
    await retried('required', 7);
    await retried('courtesy', 8);
    const worker = await scrapeWorkerMetrics(t.db);
    expect(series(worker, 'notice_ledger_window_at_risk')['renewal_notice_t72 none']).toBe(2);
    const consoleText = await renderConsoleMetrics(t.db, { quarantineAfterMs: 15 * 60_000, recountLater: () => undefined, retryCeiling: 7 });
    expect(series(consoleText, 'notice_ledger_window_at_risk')['renewal_notice_t72 none']).toBe(3);
    const page = await loadAtRiskPage(t.db, { now: new Date(), atRiskWithinMs: 24 * H, input: {}, retryCeiling: 8 });
    const row = page.rows.find((r) => r.id === atRisk.id);
    expect(row).toMatchObject({ state: 'pending', attempts: 8, lastErrorClass: 'connect_failed', category: 'required' });
    // Sorted with the closing ones, by deadline: it is the last, three days out.
    expect(page.rows.at(-1)?.id).toBe(atRisk.id);
  });
});
