import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { seedConsoleScenario, type ConsoleScenario } from '@/e2e/fixtures/console-data';
import { countQuarantined, listQuarantined } from '@/db/queries/ledger/read';
import { auditLog } from '@/db/schema/audit';
import { reminderJobs } from '@/db/schema/jobs';
import { noticeLedger } from '@/db/schema/ledger';
import { resolveQuarantine } from './quarantine';
import { loadQuarantinePage } from './quarantine-view';

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
const QUARANTINE_AFTER = 15 * 60_000;
let t: TestDatabase;
let scenario: ConsoleScenario;

async function ledgerRow(key: string) {
  const [row] = await t.db.select().from(noticeLedger).where(eq(noticeLedger.noticeKey, key));
  return row;
}
async function jobRow(key: string) {
  const [row] = await t.db.select().from(reminderJobs).where(eq(reminderJobs.noticeKey, key));
  return row;
}

beforeAll(async () => {
  t = await createTestDatabase();
  scenario = await seedConsoleScenario(t.db, { secret });
});
afterAll(async () => {
  await t.drop();
});

describe('quarantine listing', () => {
  it('lists stuck claims oldest first with deadline, domain and the provider evidence', async () => {
    const rows = await listQuarantined(t.db, { quarantineAfterMs: QUARANTINE_AFTER, limit: 10 });
    expect(rows.map((row) => row.noticeKey)).toEqual([scenario.stuckWithEvidence, scenario.stuckWithoutEvidence, scenario.stuckUntouched]);
    expect(rows[0]).toMatchObject({ recipientDomain: 'alpha.example.org', jobState: 'claimed' });
    expect(rows[0]?.evidence).toEqual([expect.objectContaining({ eventType: 'accepted', providerMessageId: 'ses-alpha', matchedBy: 'correlation' })]);
    expect(rows[1]?.evidence).toEqual([]);
    expect(rows[0]?.deadlineAt).toBeInstanceOf(Date);
  });

  it('does not list a claim younger than QUARANTINE_AFTER: a worker may be sending it right now', async () => {
    expect(await countQuarantined(t.db, { quarantineAfterMs: 50 * 60_000 })).toBe(2);
    expect(await countQuarantined(t.db, { quarantineAfterMs: 100 * 60_000 })).toBe(0);
  });

  it('pages by keyset without gaps or repeats and filters by domain', async () => {
    const first = await listQuarantined(t.db, { quarantineAfterMs: QUARANTINE_AFTER, limit: 2 });
    const last = first[1];
    if (!last) throw new Error('expected two rows');
    const second = await listQuarantined(t.db, {
      quarantineAfterMs: QUARANTINE_AFTER,
      limit: 2,
      after: { claimedAt: last.cursorAt, noticeKey: last.noticeKey },
    });
    expect([...first, ...second].map((row) => row.noticeKey)).toEqual([scenario.stuckWithEvidence, scenario.stuckWithoutEvidence, scenario.stuckUntouched]);
    expect(
      (await listQuarantined(t.db, { quarantineAfterMs: QUARANTINE_AFTER, limit: 10, filter: { recipientDomain: 'bravo.example.org' } })).map(
        (row) => row.noticeKey,
      ),
    ).toEqual([scenario.stuckWithoutEvidence]);
    expect(
      (await listQuarantined(t.db, { quarantineAfterMs: QUARANTINE_AFTER, limit: 10, filter: { olderThanMinutes: 50 } })).map((row) => row.noticeKey),
    ).toEqual([scenario.stuckWithEvidence, scenario.stuckWithoutEvidence]);
    expect(await countQuarantined(t.db, { quarantineAfterMs: QUARANTINE_AFTER, selection: { filter: { olderThanMinutes: 5 } } })).toBe(3);
    const page = await loadQuarantinePage(t.db, { query: {}, quarantineAfterMs: QUARANTINE_AFTER });
    expect(page.rows.map((row) => row.suggestion)).toEqual(['confirm_sent', 'release', 'release']);
    expect(page.total).toBe(3);
  });
});

describe('resolving quarantine', () => {
  let local: TestDatabase;
  let seeded: ConsoleScenario;
  beforeAll(async () => {
    local = await createTestDatabase();
    seeded = await seedConsoleScenario(local.db, { secret });
  });
  afterAll(async () => {
    await local.drop();
  });
  const row = async (key: string) => (await local.db.select().from(noticeLedger).where(eq(noticeLedger.noticeKey, key)))[0];
  const job = async (key: string) => (await local.db.select().from(reminderJobs).where(eq(reminderJobs.noticeKey, key)))[0];

  it('confirm sent takes the time and provider id from the evidence and audits before/after', async () => {
    const outcome = await resolveQuarantine(local.db, {
      action: 'confirm_sent',
      selection: { keys: [seeded.stuckWithEvidence] },
      actor: 'oncall@example.com',
      reason: 'SES accepted it',
      quarantineAfterMs: QUARANTINE_AFTER,
    });
    expect(outcome).toEqual({ action: 'confirm_sent', resolved: [seeded.stuckWithEvidence], skipped: 0 });
    expect(await row(seeded.stuckWithEvidence)).toMatchObject({ state: 'sent', providerMessageId: 'ses-alpha', resolution: 'operator:confirm_sent' });
    expect((await row(seeded.stuckWithEvidence))?.sentAt).toBeInstanceOf(Date);
    expect((await job(seeded.stuckWithEvidence))?.state).toBe('sent');
    const [audit] = await local.db.select().from(auditLog).where(eq(auditLog.targetId, seeded.stuckWithEvidence));
    expect(audit).toMatchObject({
      actor: 'oncall@example.com',
      action: 'quarantine.confirm_sent',
      reason: 'SES accepted it',
      before: expect.objectContaining({ ledgerState: 'claimed', jobState: 'claimed' }),
      after: expect.objectContaining({ ledgerState: 'sent', jobState: 'sent' }),
    });
  });

  it('a second resolution of the same claim changes nothing: the state guard skips it', async () => {
    const outcome = await resolveQuarantine(local.db, {
      action: 'release',
      selection: { keys: [seeded.stuckWithEvidence] },
      actor: 'late@example.com',
      reason: 'race',
      quarantineAfterMs: QUARANTINE_AFTER,
    });
    expect(outcome).toEqual({ action: 'release', resolved: [], skipped: 1 });
    expect((await row(seeded.stuckWithEvidence))?.state).toBe('sent');
    expect(await local.db.select().from(auditLog).where(eq(auditLog.actor, 'late@example.com'))).toEqual([]);
  });

  it('release makes the job due now and keeps the stored one-time code for the resend', async () => {
    const before = await row(seeded.stuckWithoutEvidence);
    await resolveQuarantine(local.db, {
      action: 'release',
      selection: { keys: [seeded.stuckWithoutEvidence] },
      actor: 'oncall@example.com',
      reason: 'no evidence',
      quarantineAfterMs: QUARANTINE_AFTER,
    });
    const after = await row(seeded.stuckWithoutEvidence);
    expect(after).toMatchObject({ state: 'released', oneTimeCode: before?.oneTimeCode });
    expect(after?.oneTimeCode).toBe('OTC-bravo');
    const released = await job(seeded.stuckWithoutEvidence);
    expect(released).toMatchObject({ state: 'pending', wakeupPublishedAt: null });
    expect(Math.abs((released?.nextAttemptAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
  });

  it('suppress by filter touches only matching quarantined claims, in one transaction', async () => {
    const preview = await countQuarantined(local.db, {
      quarantineAfterMs: QUARANTINE_AFTER,
      selection: { filter: { recipientDomain: 'charlie.example.org' } },
    });
    expect(preview).toBe(1);
    const outcome = await resolveQuarantine(local.db, {
      action: 'suppress',
      selection: { filter: { recipientDomain: 'charlie.example.org' } },
      actor: 'oncall@example.com',
      reason: 'customer closed',
      quarantineAfterMs: QUARANTINE_AFTER,
    });
    expect(outcome.resolved).toEqual([seeded.stuckUntouched]);
    expect(await row(seeded.stuckUntouched)).toMatchObject({ state: 'suppressed' });
    expect(await job(seeded.stuckUntouched)).toMatchObject({ state: 'suppressed', suppressionReason: 'operator' });
    expect(await countQuarantined(local.db, { quarantineAfterMs: QUARANTINE_AFTER })).toBe(0);
  });

  it('rolls back the ledger change when the audit write fails', async () => {
    const fresh = await createTestDatabase();
    try {
      const s = await seedConsoleScenario(fresh.db, { secret });
      await fresh.db.execute(sql`alter table audit_log add constraint no_writes check (false) not valid`);
      await expect(
        resolveQuarantine(fresh.db, {
          action: 'suppress',
          selection: { keys: [s.stuckUntouched] },
          actor: 'x@example.com',
          reason: 'boom',
          quarantineAfterMs: QUARANTINE_AFTER,
        }),
      ).rejects.toThrow();
      const [ledger] = await fresh.db.select().from(noticeLedger).where(eq(noticeLedger.noticeKey, s.stuckUntouched));
      expect(ledger?.state).toBe('claimed');
    } finally {
      await fresh.drop();
    }
  });
});

describe('the shared fixture database is untouched by the resolve tests', () => {
  it('still has all three claims', async () => {
    expect((await ledgerRow(scenario.stuckUntouched))?.state).toBe('claimed');
    expect((await jobRow(scenario.stuckUntouched))?.state).toBe('claimed');
  });
});
