import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertJob } from '@/e2e/fixtures/console-data';
import { createLogger } from '@/lib/log';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startMetricsServer } from '@/worker/metrics-server';
import { queueNotUnderTest } from '@/testing/metrics-endpoints';

/** The overview's oldest pending job against its deadline, as the worker's /metrics serves it. */

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
const H = 3_600_000;
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  const now = Date.now();
  const renewal = (index: number) => ({
    type: 'renewal_notice_t72' as const,
    identity: { subscription_id: `sub_${index}`, period_start: '2026-12-01' },
    revision: 0,
  });
  // The oldest due renewal is 3 h overdue and 1 h past its deadline; a younger one is near its deadline.
  await insertJob(t.db, { fact: renewal(1), secret, recipientEmail: 'a@example.com', dueAt: new Date(now - 3 * H), deadlineAt: new Date(now - H) });
  await insertJob(t.db, { fact: renewal(2), secret, recipientEmail: 'b@example.com', dueAt: new Date(now - H), deadlineAt: new Date(now + H / 2) });
  // A sent job is not pending: it never counts, however old.
  await insertJob(t.db, {
    fact: renewal(3),
    secret,
    recipientEmail: 'c@example.com',
    dueAt: new Date(now - 9 * H),
    deadlineAt: new Date(now - 8 * H),
    state: 'sent',
  });
  const recovery = { type: 'payment_recovery' as const, identity: { account_id: 'acct_1', reconciliation_id: 'rec_1', exception_id: 'exc_1' }, revision: 0 };
  await insertJob(t.db, { fact: recovery, secret, recipientEmail: 'd@example.com', dueAt: new Date(now + 2 * H), deadlineAt: new Date(now + 26 * H) });
  // Auto-renewal notices: the oldest due one has 5 h left, a younger one only 20 min (the one
  // about to miss its window), and one due 30 s ago with 2 min left is still within the grace
  // a healthy worker needs to pick it up.
  const autoRenewal = (index: number) => ({
    type: 'auto_renewal_notice' as const,
    identity: { subscription_id: `sub_a${index}`, period_start: '2026-12-01' },
    revision: 0,
  });
  await insertJob(t.db, { fact: autoRenewal(1), secret, recipientEmail: 'e@example.com', dueAt: new Date(now - 2 * H), deadlineAt: new Date(now + 5 * H) });
  await insertJob(t.db, { fact: autoRenewal(2), secret, recipientEmail: 'f@example.com', dueAt: new Date(now - H / 2), deadlineAt: new Date(now + H / 3) });
  await insertJob(t.db, { fact: autoRenewal(3), secret, recipientEmail: 'g@example.com', dueAt: new Date(now - 30_000), deadlineAt: new Date(now + 120_000) });
});
afterAll(async () => {
  await t.drop();
});

function valueOf(text: string, name: string, noticeType: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{notice_type="${noticeType}"} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('oldest pending gauges', () => {
  it('per notice type: how long overdue, seconds to its deadline (negative: past it), how many are near it, and the nearest deadline of a due job', async () => {
    const server = await startMetricsServer({
      queue: queueNotUnderTest,
      host: '127.0.0.1',
      port: 0,
      db: t.db,
      quarantineAfterMs: 15 * 60_000,
      logger: createLogger('oldest-test', 'silent'),
    });
    try {
      const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      expect(valueOf(text, 'notice_ledger_oldest_pending_age_seconds', 'renewal_notice_t72')).toBeCloseTo(3 * 3_600, -1);
      expect(valueOf(text, 'notice_ledger_oldest_pending_seconds_to_deadline', 'renewal_notice_t72')).toBeCloseTo(-3_600, -1);
      expect(valueOf(text, 'notice_ledger_pending_near_deadline', 'renewal_notice_t72')).toBe(2);
      expect(valueOf(text, 'notice_ledger_oldest_pending_age_seconds', 'payment_recovery')).toBe(0);
      expect(valueOf(text, 'notice_ledger_oldest_pending_seconds_to_deadline', 'payment_recovery')).toBeCloseTo(26 * 3_600, -1);
      expect(valueOf(text, 'notice_ledger_pending_near_deadline', 'payment_recovery')).toBe(0);
      // Nothing pending of this type: no series, rather than a zero that reads as "on time".
      expect(valueOf(text, 'notice_ledger_oldest_pending_seconds_to_deadline', 'renewal_notice_t24')).toBeUndefined();
      expect(valueOf(text, 'notice_ledger_due_pending_seconds_to_deadline', 'renewal_notice_t24')).toBeUndefined();
      // Nearest deadline among jobs due for over a minute: past it for the renewals, none for a
      // recovery not yet due, and the younger auto-renewal rather than the oldest one.
      expect(valueOf(text, 'notice_ledger_due_pending_seconds_to_deadline', 'renewal_notice_t72')).toBeCloseTo(-3_600, -1);
      expect(valueOf(text, 'notice_ledger_due_pending_seconds_to_deadline', 'payment_recovery')).toBeUndefined();
      expect(valueOf(text, 'notice_ledger_oldest_pending_seconds_to_deadline', 'auto_renewal_notice')).toBeCloseTo(5 * 3_600, -1);
      expect(valueOf(text, 'notice_ledger_due_pending_seconds_to_deadline', 'auto_renewal_notice')).toBeCloseTo(20 * 60, -1);
    } finally {
      await server.close();
    }
  });
});
