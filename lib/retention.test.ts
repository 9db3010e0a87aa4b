import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertJobUnlessExists } from '@/db/queries/scheduling';
import { deliveryAttempts, evidence, noticeLedger, providerEvents, reminderJobs, smsMessages } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { retentionCutoffs, RetentionPolicyError, runRetention, type RetentionPolicy } from './retention';

const DAY = 86_400_000;
const now = new Date('2026-11-29T12:00:00Z');
const ago = (days: number) => new Date(now.getTime() - days * DAY);

const policy: RetentionPolicy = {
  attemptsMs: 90 * DAY,
  providerEventsMs: 180 * DAY,
  eventDetailsMs: 30 * DAY,
  evidenceMs: 730 * DAY,
  openEvidenceMs: 1_000 * DAY,
  businessEventsMs: 730 * DAY,
  unplannedNoticesMs: 730 * DAY,
  cancellationRequestsMs: 730 * DAY,
  preferenceHistoryMs: 1_461 * DAY,
  replayItemsMs: 180 * DAY,
  ledgerMs: 400 * DAY,
  maxDelayMs: 60 * DAY,
  replayHorizonMs: 30 * DAY,
  batchSize: 2,
  maxBatches: 100,
};

describe('retentionCutoffs (pure)', () => {
  it('computes one cutoff per class from the injected clock', () => {
    const cutoffs = retentionCutoffs(policy, now);
    expect(cutoffs.attempts).toEqual(ago(90));
    expect(cutoffs.ledger).toEqual(ago(400));
    expect(cutoffs.eventDetails).toEqual(ago(30));
  });

  it('refuses a ledger horizon shorter than MAX_DELAY + REPLAY_HORIZON, whatever the config said', () => {
    expect(() => retentionCutoffs({ ...policy, ledgerMs: 89 * DAY }, now)).toThrow(RetentionPolicyError);
    expect(() => retentionCutoffs({ ...policy, ledgerMs: 90 * DAY }, now)).not.toThrow();
  });

  it('never redacts details later than the events themselves are deleted', () => {
    expect(retentionCutoffs({ ...policy, eventDetailsMs: 400 * DAY }, now).eventDetails).toEqual(ago(180));
  });
});

describe('runRetention', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  const key = () => randomBytes(32).toString('hex');

  async function job(params: { state: 'pending' | 'sent'; updatedAt: Date; evidenceRef?: string }) {
    const { job: row } = await insertJobUnlessExists(t.db, {
      noticeKey: key(),
      noticeType: 'payment_recovery',
      identity: { account_id: 'a', reconciliation_id: 'r', exception_id: randomBytes(4).toString('hex') },
      revision: 0,
      subjectId: 'a',
      customerId: null,
      recipientEmail: 'x@example.com',
      recipientTimeZone: 'UTC',
      dueAt: params.updatedAt,
      deadlineAt: params.updatedAt,
      evidenceRef: params.evidenceRef ?? null,
      source: 'test',
      batchId: null,
      payload: {},
      wakeupPublishedAt: null,
    });
    await t.db.update(reminderJobs).set({ state: params.state, updatedAt: params.updatedAt }).where(eq(reminderJobs.id, row.id));
    return row.id;
  }

  it('deletes each class past its horizon in small batches, keeps the rest, redacts old event payloads, and audits the run', async () => {
    // Attempts: 5 old, 1 recent.
    for (const days of [91, 95, 100, 200, 365, 10]) {
      await t.db.insert(deliveryAttempts).values({ noticeKey: key(), workerId: 'w', outcome: 'sent', startedAt: ago(days), finishedAt: ago(days) });
    }
    // Provider events: 181 d (deleted), 40 d (redacted), 5 d (kept whole).
    for (const [id, days] of [
      ['old', 181],
      ['mid', 40],
      ['new', 5],
    ] as const) {
      await t.db.insert(providerEvents).values({
        provider: 'sink',
        eventId: id,
        eventType: 'delivered',
        rawType: 'delivered',
        occurredAt: ago(days),
        receivedAt: ago(days),
        details: { smtpResponse: '250 ok', recipient: 'x@example.com' },
      });
    }
    // Twilio message statuses: as old as a deleted provider event (deleted), recent (kept).
    await t.db.insert(smsMessages).values([
      { messageSid: `SM${'1'.repeat(32)}`, status: 'delivered', statusRank: 4, updatedAt: ago(181) },
      { messageSid: `SM${'2'.repeat(32)}`, status: 'sent', statusRank: 3, updatedAt: ago(5) },
    ]);
    // Ledger: old sent (deleted), old claimed (kept: quarantine), recent sent (kept).
    for (const [state, days] of [
      ['sent', 401],
      ['claimed', 500],
      ['sent', 10],
    ] as const) {
      await t.db.insert(noticeLedger).values({
        noticeKey: key(),
        noticeType: 'payment_recovery',
        identity: {},
        state,
        claimedAt: ago(days),
        updatedAt: ago(days),
        sentAt: state === 'sent' ? ago(days) : null,
      });
    }
    // Evidence: old resolved (deleted), old resolved but cited by a pending job (kept), old open (kept).
    await t.db.insert(evidence).values([
      { ref: 'ev-old', kind: 'k', state: 'resolved', openedAt: ago(800), resolvedAt: ago(731) },
      { ref: 'ev-cited', kind: 'k', state: 'resolved', openedAt: ago(800), resolvedAt: ago(731) },
      { ref: 'ev-open', kind: 'k', state: 'open', openedAt: ago(800) },
    ]);
    const pendingJob = await job({ state: 'pending', updatedAt: ago(500), evidenceRef: 'ev-cited' });
    const oldSentJob = await job({ state: 'sent', updatedAt: ago(401) });
    const recentSentJob = await job({ state: 'sent', updatedAt: ago(100) });

    const report = await runRetention({ db: t.db, policy, now });
    expect(report).toEqual({
      attemptsDeleted: 5,
      providerEventsDeleted: 1,
      providerEventsRedacted: 1,
      smsMessagesDeleted: 1,
      evidenceDeleted: 1,
      openEvidenceDeleted: 0,
      ledgerDeleted: 1,
      jobsDeleted: 1,
      unplannedNoticesDeleted: 0,
      businessEventsDeleted: 0,
      cancellationRequestsDeleted: 0,
      preferenceChangesDeleted: 0,
      replayItemsDeleted: 0,
      replayRejectionsRedacted: 0,
    });

    expect(await t.db.$count(deliveryAttempts)).toBe(1);
    const events = await t.db.select({ eventId: providerEvents.eventId, details: providerEvents.details }).from(providerEvents).orderBy(providerEvents.eventId);
    expect(events.map((e) => e.eventId)).toEqual(['mid', 'new']);
    expect(events[0]?.details).toMatchObject({ redacted: true });
    expect(events[0]?.details).not.toHaveProperty('recipient');
    expect(events[1]?.details).toHaveProperty('smtpResponse', '250 ok');
    const ledger = await t.db.select({ state: noticeLedger.state }).from(noticeLedger).orderBy(noticeLedger.state);
    expect(ledger.map((row) => row.state)).toEqual(['claimed', 'sent']);
    const refs = await t.db.select({ ref: evidence.ref }).from(evidence).orderBy(evidence.ref);
    expect(refs.map((row) => row.ref)).toEqual(['ev-cited', 'ev-open']);
    const jobs = await t.db.select({ id: reminderJobs.id }).from(reminderJobs);
    expect(jobs.map((row) => row.id).sort()).toEqual([pendingJob, recentSentJob].sort());
    expect(jobs.map((row) => row.id)).not.toContain(oldSentJob);
    const audit = await t.pool.query(`select actor, action from audit_log where action = 'retention.run'`);
    expect(audit.rows).toEqual([{ actor: 'system:retention', action: 'retention.run' }]);

    // A second pass finds nothing and writes nothing.
    const again = await runRetention({ db: t.db, policy, now });
    expect(Object.values(again).every((n) => n === 0)).toBe(true);
    expect((await t.pool.query(`select count(*)::int as n from audit_log where action = 'retention.run'`)).rows[0]?.n).toBe(1);
  });

  it('refuses to run at all with an unsafe ledger horizon, deleting nothing', async () => {
    await t.db.insert(deliveryAttempts).values({ noticeKey: key(), workerId: 'w', outcome: 'sent', startedAt: ago(1000), finishedAt: ago(1000) });
    const before = await t.db.$count(deliveryAttempts);
    await expect(runRetention({ db: t.db, policy: { ...policy, ledgerMs: 30 * DAY }, now })).rejects.toThrow(RetentionPolicyError);
    expect(await t.db.$count(deliveryAttempts)).toBe(before);
  });
});
