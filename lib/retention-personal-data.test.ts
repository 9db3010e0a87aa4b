import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { insertJobUnlessExists } from '@/db/queries/scheduling';
import { businessEvents, cancellationRequests, evidence, recipientPreferenceChanges, reminderJobs, replayItems, replays, unplannedNotices } from '@/db/schema';
import { loadConfig } from '@/lib/config';
import type { JobState } from '@/db/schema/states';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { retentionPolicyFrom, startRetention, type RetentionReport } from './retention';

/**
 * Every table that holds personal data beyond the original classes, pruned by the pass the worker
 * runs (startRetention with retentionPolicyFrom(config), as worker/start.ts wires it), with each
 * class's own setting: rows older than its limit go, newer ones and the rows a job that may still
 * be sent needs stay. Each class has a different limit, so one read against another's cutoff fails.
 */

const DAY = 86_400_000;
const now = new Date('2026-11-29T12:00:00Z');
const ago = (days: number) => new Date(now.getTime() - days * DAY);
const ahead = (days: number) => new Date(now.getTime() + days * DAY);

const config = loadConfig({
  NOTICE_KEY_SECRET: 'x'.repeat(32),
  RETENTION_BUSINESS_EVENTS: '200d',
  RETENTION_UNPLANNED_NOTICES: '150d',
  RETENTION_CANCELLATION_REQUESTS: '120d',
  RETENTION_PREFERENCE_HISTORY: '300d',
  RETENTION_REPLAY_ITEMS: '60d',
  RETENTION_OPEN_EVIDENCE: '250d',
  // Two rows per statement: every class runs several batches here.
  RETENTION_BATCH: '2',
});

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const key = () => randomBytes(32).toString('hex');

async function event(name: string, receivedAt: Date): Promise<string> {
  const [row] = await t.db
    .insert(businessEvents)
    .values({
      type: 'subscription_renewal',
      identity: { subscription_id: name },
      bodySha256: 'b'.repeat(64),
      anchorAt: receivedAt,
      region: 'US-CA',
      timeZone: 'UTC',
      recipient: { email: `${name}@example.com`, phone: '+14155550100' },
      ruleSetVersion: 'rules-test',
      source: 'test',
      receivedAt,
    })
    .returning({ id: businessEvents.id });
  if (!row) throw new Error('event insert returned nothing');
  return row.id;
}

async function job(params: { state: JobState; updatedAt: Date; deadlineAt: Date; eventId?: string; evidenceRef?: string }): Promise<string> {
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
    deadlineAt: params.deadlineAt,
    evidenceRef: params.evidenceRef ?? null,
    source: 'test',
    batchId: null,
    payload: {},
    wakeupPublishedAt: null,
  });
  await t.db
    .update(reminderJobs)
    .set({ state: params.state, updatedAt: params.updatedAt, eventId: params.eventId ?? null })
    .where(eq(reminderJobs.id, row.id));
  return row.id;
}

async function gap(name: string, { createdAt, resolvedAt }: { createdAt: Date; resolvedAt: Date | null }): Promise<string> {
  const eventId = await event(name, createdAt);
  await t.db.insert(unplannedNotices).values({
    eventId,
    noticeType: 'auto_renewal_notice',
    category: 'required',
    reason: 'window_passed',
    ruleSetVersion: 'rules-test',
    region: 'US-CA',
    createdAt,
    resolvedAt,
    resolvedBy: resolvedAt ? 'counsel' : null,
    resolution: resolvedAt ? 'sent by post' : null,
  });
  return eventId;
}

async function replay(state: 'completed' | 'rejected' | 'running', at: Date): Promise<string> {
  const [row] = await t.db
    .insert(replays)
    .values({
      batchId: `replay-${randomBytes(4).toString('hex')}`,
      state,
      filter: { uploaded: true },
      requestedBy: randomUUID(),
      requestReason: 'outage',
      decidedBy: randomUUID(),
      requestedAt: at,
      decidedAt: at,
      finishedAt: state === 'completed' ? at : null,
      uploadRejections: [{ line: 3, reason: 'recipient_email "ana@example" is not an email address', raw: 'ana@example,…' }],
    })
    .returning({ id: replays.id });
  if (!row) throw new Error('replay insert returned nothing');
  await t.db.insert(replayItems).values([0, 1, 2].map((line) => ({ replayId: row.id, noticeKey: key(), line, recipientEmail: `row${line}@example.com` })));
  return row.id;
}

/** The worker's retention, started as worker/start.ts starts it, until its first pass reports. */
async function runWorkerRetentionPass(): Promise<RetentionReport> {
  const reports: RetentionReport[] = [];
  const failures: object[] = [];
  const running = startRetention({
    db: t.db,
    policy: retentionPolicyFrom(config),
    every: 20,
    clock: () => now,
    logger: { info: (report) => reports.push(report as RetentionReport), warn: (failure) => failures.push(failure) },
  });
  try {
    await vi.waitFor(
      () => {
        expect(failures).toEqual([]);
        expect(reports.length).toBeGreaterThan(0);
      },
      { timeout: 20_000, interval: 20 },
    );
  } finally {
    await running.stop();
  }
  const [first] = reports;
  if (!first) throw new Error('no retention report');
  return first;
}

describe('retention of personal data, through the worker pass', () => {
  it('deletes each class past its own setting, keeps newer rows and what a job that may still be sent needs', async () => {
    // Business events (RETENTION_BUSINESS_EVENTS 200 d).
    const eventOld = await event('old', ago(201));
    const eventNew = await event('new', ago(199));
    const eventPending = await event('pending', ago(500));
    await job({ state: 'pending', updatedAt: ago(500), deadlineAt: ahead(5), eventId: eventPending });
    const eventFailedOpen = await event('failed-open', ago(500));
    await job({ state: 'failed', updatedAt: ago(300), deadlineAt: ahead(2), eventId: eventFailedOpen });
    const eventSettledRecently = await event('settled-recently', ago(500));
    await job({ state: 'sent', updatedAt: ago(100), deadlineAt: ago(100), eventId: eventSettledRecently });
    const eventSettledLongAgo = await event('settled-long-ago', ago(500));
    const sentLongAgo = await job({ state: 'sent', updatedAt: ago(300), deadlineAt: ago(300), eventId: eventSettledLongAgo });

    // Unplanned notices (RETENTION_UNPLANNED_NOTICES 150 d), each with its own event received when it was created.
    const gapResolvedLongAgo = await gap('gap-resolved-long-ago', { createdAt: ago(400), resolvedAt: ago(151) });
    const gapOpenOld = await gap('gap-open-old', { createdAt: ago(151), resolvedAt: null });
    const gapResolvedRecently = await gap('gap-resolved-recently', { createdAt: ago(400), resolvedAt: ago(10) });
    const gapOpenNew = await gap('gap-open-new', { createdAt: ago(149), resolvedAt: null });

    // Cancellation requests (RETENTION_CANCELLATION_REQUESTS 120 d).
    for (const [subject, days] of [
      ['cancel-old', 121],
      ['cancel-new', 119],
    ] as const) {
      await t.db.insert(cancellationRequests).values({
        noticeKey: key(),
        jobId: randomUUID(),
        noticeType: 'renewal_notice_t72',
        identity: { subscription_id: subject, period_start: '2026-01-01' },
        subjectId: subject,
        source: 'recipient_page',
        requestedAt: ago(days),
      });
    }

    // Preference history (RETENTION_PREFERENCE_HISTORY 300 d): superseded and old goes; the newest of each preference stays.
    const change = (recipient: string, channel: 'email' | 'sms', toState: 'opted_in' | 'opted_out', days: number, reason: string) => ({
      recipient,
      category: 'courtesy' as const,
      channel,
      toState,
      source: 'recipient_page' as const,
      reason,
      changedAt: ago(days),
    });
    await t.db
      .insert(recipientPreferenceChanges)
      .values([
        change('ana@example.com', 'email', 'opted_out', 400, 'superseded-old'),
        change('ana@example.com', 'email', 'opted_in', 380, 'superseded-old-2'),
        change('ana@example.com', 'email', 'opted_out', 350, 'newest-old'),
        change('+14155550100', 'sms', 'opted_out', 500, 'only-one-old'),
        change('bo@example.com', 'email', 'opted_out', 299, 'superseded-new'),
        change('bo@example.com', 'email', 'opted_in', 10, 'newest-new'),
      ]);

    // Replay items (RETENTION_REPLAY_ITEMS 60 d): a finished replay's, never a running one's.
    const completedOld = await replay('completed', ago(61));
    const rejectedOld = await replay('rejected', ago(61));
    const completedNew = await replay('completed', ago(59));
    const runningOld = await replay('running', ago(500));

    // Open evidence (RETENTION_OPEN_EVIDENCE 250 d), and resolved evidence (RETENTION_EVIDENCE, default 730 d) cited by a claimed job.
    await t.db.insert(evidence).values([
      { ref: 'open-old', kind: 'k', state: 'open', openedAt: ago(251) },
      { ref: 'open-new', kind: 'k', state: 'open', openedAt: ago(249) },
      { ref: 'open-cited-pending', kind: 'k', state: 'open', openedAt: ago(500) },
      { ref: 'open-cited-sent', kind: 'k', state: 'open', openedAt: ago(500) },
      { ref: 'resolved-cited-claimed', kind: 'k', state: 'resolved', openedAt: ago(900), resolvedAt: ago(731) },
      { ref: 'resolved-cited-failed-open', kind: 'k', state: 'resolved', openedAt: ago(900), resolvedAt: ago(731) },
    ]);
    await job({ state: 'pending', updatedAt: ago(400), deadlineAt: ahead(3), evidenceRef: 'open-cited-pending' });
    await job({ state: 'sent', updatedAt: ago(100), deadlineAt: ago(100), evidenceRef: 'open-cited-sent' });
    // A quarantined claim can be released, a failed notice with its window open retried: either then re-reads its evidence.
    await job({ state: 'claimed', updatedAt: ago(800), deadlineAt: ahead(1), evidenceRef: 'resolved-cited-claimed' });
    await job({ state: 'failed', updatedAt: ago(300), deadlineAt: ahead(1), evidenceRef: 'resolved-cited-failed-open' });

    const report = await runWorkerRetentionPass();
    expect(report).toMatchObject({
      businessEventsDeleted: 3,
      unplannedNoticesDeleted: 2,
      cancellationRequestsDeleted: 1,
      preferenceChangesDeleted: 2,
      replayItemsDeleted: 6,
      replayRejectionsRedacted: 2,
      openEvidenceDeleted: 2,
      evidenceDeleted: 0,
    });

    const events = new Set((await t.db.select({ id: businessEvents.id }).from(businessEvents)).map((row) => row.id));
    for (const [name, id] of Object.entries({ eventOld, eventSettledLongAgo, gapResolvedLongAgo })) expect(events.has(id), `${name} deleted`).toBe(false);
    // gapOpenOld's event is younger than its own limit: it stays though its gap went.
    for (const [name, id] of Object.entries({ eventNew, eventPending, eventFailedOpen, eventSettledRecently, gapResolvedRecently, gapOpenNew, gapOpenOld }))
      expect(events.has(id), `${name} kept`).toBe(true);
    // The settled job outlives its event (it goes with the ledger horizon) and keeps its own recipient.
    const [settled] = await t.db
      .select({ eventId: reminderJobs.eventId, email: reminderJobs.recipientEmail })
      .from(reminderJobs)
      .where(eq(reminderJobs.id, sentLongAgo));
    expect(settled).toEqual({ eventId: null, email: 'x@example.com' });

    const gaps = await t.db.select({ eventId: unplannedNotices.eventId }).from(unplannedNotices);
    expect(gaps.map((row) => row.eventId).sort()).toEqual([gapResolvedRecently, gapOpenNew].sort());

    const cancellations = await t.db.select({ subjectId: cancellationRequests.subjectId }).from(cancellationRequests);
    expect(cancellations.map((row) => row.subjectId)).toEqual(['cancel-new']);

    const history = await t.db.select({ reason: recipientPreferenceChanges.reason }).from(recipientPreferenceChanges);
    expect(history.map((row) => row.reason).sort()).toEqual(['newest-new', 'newest-old', 'only-one-old', 'superseded-new']);

    const items = await t.db.select({ replayId: replayItems.replayId }).from(replayItems);
    const itemsOf = (id: string) => items.filter((row) => row.replayId === id).length;
    expect([itemsOf(completedOld), itemsOf(rejectedOld), itemsOf(completedNew), itemsOf(runningOld)]).toEqual([0, 0, 3, 3]);
    const rejections = new Map(
      (await t.db.select({ id: replays.id, rejections: replays.uploadRejections }).from(replays)).map((row) => [row.id, row.rejections]),
    );
    // The count of refused rows survives (the replay page shows it); the values they quoted do not.
    expect(rejections.get(completedOld)).toEqual([{ line: 3, reason: 'redacted by retention', raw: '' }]);
    expect(rejections.get(rejectedOld)).toEqual([{ line: 3, reason: 'redacted by retention', raw: '' }]);
    expect(JSON.stringify(rejections.get(completedNew))).toContain('ana@example');
    expect(JSON.stringify(rejections.get(runningOld))).toContain('ana@example');

    const refs = await t.db.select({ ref: evidence.ref }).from(evidence);
    expect(refs.map((row) => row.ref).sort()).toEqual(['open-cited-pending', 'open-new', 'resolved-cited-claimed', 'resolved-cited-failed-open']);

    const audit = await t.pool.query<{ after: Record<string, number> }>(`select after from audit_log where action = 'retention.run'`);
    expect(audit.rows[0]?.after).toMatchObject({ businessEventsDeleted: 3, preferenceChangesDeleted: 2 });
  });
});

describe('retention settings', () => {
  it('each class has a default that keeps what a dispute can need', () => {
    const defaults = loadConfig({ NOTICE_KEY_SECRET: 'x'.repeat(32) });
    expect(retentionPolicyFrom(defaults)).toMatchObject({
      businessEventsMs: 730 * DAY,
      unplannedNoticesMs: 730 * DAY,
      cancellationRequestsMs: 730 * DAY,
      preferenceHistoryMs: 1_461 * DAY,
      openEvidenceMs: 730 * DAY,
      replayItemsMs: 180 * DAY,
    });
  });
});
