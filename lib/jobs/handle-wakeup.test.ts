import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { insertBackfilledSent } from '@/db/queries/ledger/backfill';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { resolveQuarantine } from '@/lib/console/quarantine';
import { evidence, noticeLedger, recipientSuppressions } from '@/db/schema';
import { insertTestJob, readJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { createLogger } from '@/lib/log';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { createMailTransport } from '@/lib/mail/transport';
import { claimWindowNotices, duplicatesSuppressed, windowMissed, wouldSuppress } from '@/lib/metrics/registry';
import type { Delivery, HandlerResult } from '@/lib/queue/types';
import { createWakeupHandler, DeliveryAbortedError, type SendPathSettings } from './handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from './rate-limit';
import { readFileSync } from 'node:fs';
import { activeNoticeConfig } from '@/lib/windows/active';
import { parseNoticeConfig, type NoticeConfig } from '@/lib/windows/load-config';
import { parseQuietHours } from '@/lib/windows/quiet-hours';
import { setPreference } from '@/db/queries/preferences';
import { findRecipientSuppression } from '@/db/queries/suppressions';
import { findRecipientNotice } from '@/db/queries/recipient-notice';
import { verifyRecipientToken } from '@/lib/recipient/link';
import { findLinkedNoticeKey, linkExpiry } from '@/lib/recipient/link-notice';
import { insertSentNotice, recipientLinkIn, tokenOf } from '@/testing/recipient';

let t: TestDatabase;
let sink: SmtpSink;
let limiter: DomainRateLimiter;
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);

const settings: SendPathSettings = {
  mode: 'enforce',
  noticeConfig: activeNoticeConfig().config,
  retryBaseMs: 1_000,
  retryCapMs: 10_000,
  maxAttempts: 3,
  secret: process.env.NOTICE_KEY_SECRET ?? '',
  cancelBaseUrl: 'https://notices.test',
  maxTokenWaitMs: 1_000,
};

function handlerFor(overrides: Partial<SendPathSettings> = {}, workerId = 'test-worker', { claimWindow }: { claimWindow?: number } = {}) {
  const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
  return createWakeupHandler({
    db: t.db,
    mail,
    rateLimiter: limiter,
    settings: { ...settings, ...overrides },
    workerId,
    logger: createLogger('test', 'silent'),
    now,
    claimWindow,
  });
}

/**
 * The shipped configuration as the worker loads it, with QUIET_HOURS = `fallback` and the
 * types in `own` given quiet hours of their own (`"off"` or a window).
 */
function configWith({ fallback, own = {} }: { fallback: string | null; own?: Record<string, string> }): NoticeConfig {
  const json = JSON.parse(readFileSync(activeNoticeConfig().config.file, 'utf8')) as { noticeTypes: Record<string, Record<string, unknown>> };
  for (const [type, quietHours] of Object.entries(own)) json.noticeTypes[type] = { ...json.noticeTypes[type], quietHours };
  return parseNoticeConfig(json, activeNoticeConfig().config.file, { fallbackQuietHours: fallback ? parseQuietHours(fallback) : null }).config;
}

/** "HH:00-HH:00" in UTC, from `startHours` to `endHours` after the current hour (negative: before it). */
function utcWindow(startHours: number, endHours: number): string {
  const hour = new Date().getUTCHours();
  const at = (offset: number) => `${String((hour + offset + 24) % 24).padStart(2, '0')}:00`;
  return `${at(startHours)}-${at(endHours)}`;
}

let deliveries = 0;
function delivery(jobId: string, signal: AbortSignal = new AbortController().signal): Delivery {
  deliveries += 1;
  return { wakeup: { jobId }, messageId: `msg-${deliveries}`, signal };
}

/** The notice a mailed recipient-page link resolves to, and when it stops working, as the page route reads them. */
async function linkedNotice(link: string): Promise<{ noticeKey: string; expiresAt: Date } | null> {
  const verdict = verifyRecipientToken({ secret: settings.secret, token: tokenOf(link) });
  if (!verdict.ok || verdict.purpose !== 'page') return null;
  const noticeKey = await findLinkedNoticeKey(t.db, verdict);
  const notice = noticeKey ? await findRecipientNotice(t.db, { noticeKey }) : null;
  if (!notice) return null;
  return { noticeKey: notice.job.noticeKey, expiresAt: linkExpiry({ purpose: 'page', anchorAt: notice.anchorAt, deadlineAt: notice.job.deadlineAt }) };
}

function codeIn(raw: string): string | null {
  // A part with a non-ASCII character (€) is quoted-printable: undo its soft breaks and escapes first.
  const decoded = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return /confirmation code: ([A-Z2-9]{10})/.exec(decoded)?.[1] ?? null;
}

async function metricValue(counter: typeof duplicatesSuppressed | typeof wouldSuppress | typeof windowMissed, labels: Record<string, string>): Promise<number> {
  const data = await counter.get();
  return data.values
    .filter((value) => Object.entries(labels).every(([name, wanted]) => (value.labels as Record<string, unknown>)[name] === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
});

afterAll(async () => {
  await sink?.stop();
  await t?.drop();
});

beforeEach(() => {
  clockOffsetMs = 0;
  sink.setFault({ kind: 'none' });
});

describe('send path against PostgreSQL and a real SMTP peer', () => {
  it('claims, sends with our Message-ID and correlation, commits, and discards a redelivery', async () => {
    const job = await insertTestJob(t.db);
    const handle = handlerFor();
    expect(await handle(delivery(job.id))).toEqual({ ack: true });

    const corr = correlationOf(job.noticeKey);
    expect(sink.countByCorrelation(corr)).toBe(1);
    const [message] = sink.messages().filter((m) => m.correlation === corr);
    expect(message?.messageId).toBe(`<${corr}@notices.test>`);
    expect(message?.headers['x-notice-correlation']).toBe(corr);
    expect(message?.headers['x-ses-message-tags']).toBe(`notice_correlation=${corr}`);

    const ledger = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(ledger).toMatchObject({ state: 'sent', source: 'worker', providerMessageId: message?.queueId, recipientDomain: 'example.test' });
    expect(ledger?.oneTimeCode).toBe(codeIn(message?.raw ?? ''));
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent', attempts: 1 });

    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(corr)).toBe(1);
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.map((a) => a.outcome)).toEqual(['sent', 'discarded']);
    expect(attempts[0]?.claimToCommitMs).toEqual(expect.any(Number));
    expect(attempts[0]?.correlationId).toBe(corr);
  });

  it('defers an early wake-up to due_at without spending an attempt', async () => {
    const dueAt = new Date(Date.now() + 3_600_000);
    const job = await insertTestJob(t.db, { dueAt });
    expect(await handlerFor()(delivery(job.id))).toEqual({ ack: true, wakeAt: dueAt });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => [a.outcome, a.detail])).toEqual([['deferred', 'early']]);
  });

  it('suppresses by policy without claiming: unsubscribed recipient, resolved evidence, passed deadline', async () => {
    const unsubscribed = await insertTestJob(t.db, { recipientEmail: 'Gone@Example.test' });
    await t.db.insert(recipientSuppressions).values({ email: 'gone@example.test', reason: 'unsubscribed' });
    await t.db.insert(evidence).values({ ref: 'exc-1', kind: 'reconciliation_exception', state: 'resolved' });
    const resolved = await insertTestJob(t.db, { evidenceRef: 'exc-1' });
    const late = await insertTestJob(t.db, { dueAt: new Date(Date.now() - 7_200_000), deadlineAt: new Date(Date.now() - 60_000) });
    const handle = handlerFor();
    for (const job of [unsubscribed, resolved, late]) expect(await handle(delivery(job.id))).toEqual({ ack: true });

    expect(await readJob(t.db, unsubscribed.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'unsubscribed' });
    expect(await readJob(t.db, resolved.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'evidence_resolved' });
    expect(await readJob(t.db, late.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'window_missed' });
    for (const job of [unsubscribed, resolved, late]) {
      expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
      expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    }
  });

  it('defers a wake-up before window_earliest to it without an attempt, and never sends after latest', async () => {
    const windowEarliest = new Date(Date.now() + 2 * 3_600_000);
    const early = await insertTestJob(t.db, { windowEarliest, category: 'required' });
    const handle = handlerFor();
    expect(await handle(delivery(early.id))).toEqual({ ack: true, wakeAt: windowEarliest });
    expect(await readJob(t.db, early.id)).toMatchObject({ state: 'pending', attempts: 0, nextAttemptAt: windowEarliest });
    expect((await listAttemptsForJob(t.db, { jobId: early.id })).map((a) => [a.outcome, a.detail])).toEqual([['deferred', 'early']]);

    const before = await metricValue(windowMissed, { notice_type: 'renewal_notice_t72', category: 'required' });
    const late = await insertTestJob(t.db, {
      windowEarliest: new Date(Date.now() - 3 * 3_600_000),
      dueAt: new Date(Date.now() - 3 * 3_600_000),
      deadlineAt: new Date(Date.now() - 1),
      category: 'required',
    });
    expect(await handle(delivery(late.id))).toEqual({ ack: true });
    expect(await readJob(t.db, late.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'window_missed', attempts: 0 });
    expect((await listAttemptsForJob(t.db, { jobId: late.id })).map((a) => [a.outcome, a.detail])).toEqual([['suppressed_policy', 'window_missed']]);
    expect(await metricValue(windowMissed, { notice_type: 'renewal_notice_t72', category: 'required' })).toBe(before + 1);
    for (const job of [early, late]) expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
  });

  it('re-checks the window after the domain token: a window that closed meanwhile is missed, not sent late', async () => {
    const job = await insertTestJob(t.db, { deadlineAt: new Date(Date.now() + 60_000) });
    // The clock read at the start is inside the window; every later read (after the token) is an hour on.
    let reads = 0;
    const start = Date.now();
    const stepping = () => new Date(reads++ === 0 ? start : start + 3_600_000);
    const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
    const handle = createWakeupHandler({
      db: t.db,
      mail,
      rateLimiter: limiter,
      settings,
      workerId: 'w',
      logger: createLogger('test', 'silent'),
      now: stepping,
    });
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'window_missed' });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
  });

  it("a window that closes between the send path's check and its claim is missed, never claimed late", async () => {
    // The clock moves past the deadline between the last check before the claim and the claim
    // itself (a coalesced batch or a lock wait in production): the claim statement refuses it.
    const deadlineAt = new Date(Date.now() + 60_000);
    const job = await insertTestJob(t.db, { windowEarliest: new Date(Date.now() - 3_600_000), dueAt: new Date(Date.now() - 3_600_000), deadlineAt });
    let calls = 0;
    const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
    const handle = createWakeupHandler({
      db: t.db,
      mail,
      rateLimiter: limiter,
      settings,
      workerId: 'late-claimer',
      logger: createLogger('test', 'silent'),
      // startedAt, the window check after the token: inside; from the claim on: past the deadline.
      now: () => new Date(calls++ < 2 ? deadlineAt.getTime() - 1_000 : deadlineAt.getTime() + 1),
    });
    const sentBefore = sink.messages().length;
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'window_missed' });
    expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => [a.outcome, a.detail])).toEqual([['suppressed_policy', 'window_missed']]);
    expect(sink.messages().length).toBe(sentBefore);
  });

  it('defers into the end of quiet hours; when they outlast latest a courtesy notice is window_missed, a required one is sent inside them', async () => {
    const job = await insertTestJob(t.db);
    const tight = await insertTestJob(t.db, { deadlineAt: new Date(Date.now() + 60_000) });
    const required = await insertTestJob(t.db, { deadlineAt: new Date(Date.now() + 60_000), category: 'required' });
    // A window covering "now" in UTC, ending ~2 h from now.
    const handle = handlerFor({ noticeConfig: configWith({ fallback: utcWindow(-1, 2) }) });
    const result = await handle(delivery(job.id));
    expect(result).toMatchObject({ ack: true, wakeAt: expect.any(Date) });
    expect((await readJob(t.db, job.id)).state).toBe('pending');
    expect(await handle(delivery(tight.id))).toEqual({ ack: true });
    expect(await readJob(t.db, tight.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'window_missed' });
    expect((await listAttemptsForJob(t.db, { jobId: tight.id })).map((a) => [a.outcome, a.detail])).toEqual([
      ['suppressed_policy', 'quiet_hours_cover_window'],
    ]);
    expect(sink.countByCorrelation(correlationOf(tight.noticeKey))).toBe(0);
    expect(await handle(delivery(required.id))).toEqual({ ack: true });
    expect(await readJob(t.db, required.id)).toMatchObject({ state: 'sent' });
    expect((await listAttemptsForJob(t.db, { jobId: required.id })).map((a) => [a.outcome, a.detail])).toEqual([['sent', 'quiet_hours_overridden']]);
    expect(sink.countByCorrelation(correlationOf(required.noticeKey))).toBe(1);
  });

  it("keeps each type's quiet hours at send: its own, else the configuration's, else QUIET_HOURS; off is none", async () => {
    // QUIET_HOURS is quiet two hours from now; renewal_notice_t24's own quiet hours cover now.
    const apart = handlerFor({ noticeConfig: configWith({ fallback: utcWindow(2, 4), own: { renewal_notice_t24: utcWindow(-1, 2) } }) });
    const inherits = await insertTestJob(t.db);
    const own = await insertTestJob(t.db, {
      fact: { type: 'renewal_notice_t24', identity: { subscription_id: `sub_own_${deliveries}`, period_start: '2026-10-01' }, revision: 0 },
    });
    expect(await apart(delivery(inherits.id))).toEqual({ ack: true });
    expect((await readJob(t.db, inherits.id)).state).toBe('sent');
    const deferred = await apart(delivery(own.id));
    expect(deferred).toMatchObject({ ack: true, wakeAt: expect.any(Date) });
    expect((await readJob(t.db, own.id)).state).toBe('pending');
    expect(((deferred as { wakeAt: Date }).wakeAt.getUTCHours() - new Date().getUTCHours() + 24) % 24).toBe(2);
    expect(sink.countByCorrelation(correlationOf(own.noticeKey))).toBe(0);

    // QUIET_HOURS covers now: a type that inherits defers, one set to "off" is sent.
    const quietNow = handlerFor({ noticeConfig: configWith({ fallback: utcWindow(-1, 2), own: { payment_recovery: 'off' } }) });
    const inheritsQuiet = await insertTestJob(t.db);
    const off = await insertTestJob(t.db, {
      fact: { type: 'payment_recovery', identity: { account_id: `acct_off_${deliveries}`, reconciliation_id: 'rec_1', exception_id: 'exc_1' }, revision: 0 },
    });
    expect(await quietNow(delivery(inheritsQuiet.id))).toMatchObject({ ack: true, wakeAt: expect.any(Date) });
    expect((await readJob(t.db, inheritsQuiet.id)).state).toBe('pending');
    expect(await quietNow(delivery(off.id))).toEqual({ ack: true });
    expect((await readJob(t.db, off.id)).state).toBe('sent');
    expect(sink.countByCorrelation(correlationOf(off.noticeKey))).toBe(1);
  });

  it('releases the claim on 451 and retries with backoff, then fails on 550 with no claim left', async () => {
    const job = await insertTestJob(t.db);
    const corr = correlationOf(job.noticeKey);
    const handle = handlerFor();
    sink.setFault({ kind: 'reject', code: 451, times: 1 });
    const before = Date.now();
    const first: HandlerResult = await handle(delivery(job.id));
    const after = Date.now();
    expect(first).toMatchObject({ ack: true, wakeAt: expect.any(Date) });
    const afterFirst = await readJob(t.db, job.id);
    expect(afterFirst).toMatchObject({ state: 'pending', attempts: 1, lastErrorClass: 'smtp_451' });
    // Backoff for attempt 1 with a 1 s base is 0.5–1 s after the moment of the decision,
    // which lies between `before` and `after` (bounds that hold however loaded the machine is).
    const retryAt = afterFirst.nextAttemptAt.getTime();
    expect(retryAt).toBeGreaterThanOrEqual(before + 500);
    expect(retryAt).toBeLessThanOrEqual(after + 1_000);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'released', claimToken: null });

    // Before the backoff is over, a duplicate wake-up only defers.
    expect(await handle(delivery(job.id))).toMatchObject({ ack: true, wakeAt: afterFirst.nextAttemptAt });

    clockOffsetMs = 2_000;
    sink.setFault({ kind: 'reject', code: 550, times: 1 });
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'failed', attempts: 2, lastErrorClass: 'smtp_550' });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'released' });
    expect(sink.countByCorrelation(corr)).toBe(0);
    expect(
      sink
        .rejections()
        .filter((r) => r.correlation === corr)
        .map((r) => r.code),
    ).toEqual([451, 550]);
    expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => a.outcome)).toEqual(['retryable_failure', 'deferred', 'permanent_failure']);
  });

  it('a notice whose template cannot render fails permanently once, the reason in the attempt, nothing sent, no retry', async () => {
    // A row written before the payload was checked at the front door (or by hand): no reference.
    const job = await insertTestJob(t.db, {
      fact: { type: 'payment_recovery', identity: { account_id: 'acct_r', reconciliation_id: 'rec_r', exception_id: `exc_${Date.now()}` }, revision: 0 },
      payload: { customer_name: 'Ada', amount: '49.00', currency: 'EUR' },
    });
    const handle = handlerFor();
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'failed', attempts: 1, lastErrorClass: 'render_failed' });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'released' });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.map((a) => [a.outcome, a.errorClass, a.detail])).toEqual([
      ['permanent_failure', 'render_failed', expect.stringMatching(/^payment_recovery\/email\.en\.subject: undefined variable: reference/)],
    ]);
    // A second wake-up finds a failed job: discarded, not another render.
    clockOffsetMs = 60_000;
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => a.outcome)).toEqual(['permanent_failure', 'discarded']);
  });

  it('keeps retrying past MAX_ATTEMPTS while the window is open, never waking after it, and ends window_missed with the cause', async () => {
    // 90 s of window, 1 s base and 10 s cap: the old code failed the notice after its 2nd attempt.
    const deadlineAt = new Date(Date.now() + 90_000);
    const job = await insertTestJob(t.db, { deadlineAt });
    const handle = handlerFor({ maxAttempts: 2 });
    sink.setFault({ kind: 'reject', code: 451 });
    const wakeAts: Date[] = [];
    for (let round = 0; round < 100; round += 1) {
      const result = await handle(delivery(job.id));
      const row = await readJob(t.db, job.id);
      if (row.state !== 'pending') break;
      expect('wakeAt' in result && result.wakeAt).toBeTruthy();
      const wakeAt = 'wakeAt' in result && result.wakeAt ? result.wakeAt : deadlineAt;
      wakeAts.push(wakeAt);
      expect(row.nextAttemptAt).toEqual(wakeAt);
      clockOffsetMs = wakeAt.getTime() - Date.now();
    }
    expect(wakeAts.length).toBeGreaterThan(2);
    expect(wakeAts.every((at) => at.getTime() <= deadlineAt.getTime())).toBe(true);
    const final = await readJob(t.db, job.id);
    expect(final).toMatchObject({ state: 'suppressed', suppressionReason: 'window_missed', lastErrorClass: 'smtp_451', attempts: wakeAts.length + 1 });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.filter((a) => a.outcome === 'permanent_failure')).toEqual([]);
    expect(attempts.at(-1)).toMatchObject({ outcome: 'suppressed_policy', detail: 'smtp_451' });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    // Released, not failed: nothing holds the fact.
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('released');
  });

  it('never lets a temporary rejection bypass a permanent suppression that arrives meanwhile', async () => {
    const job = await insertTestJob(t.db, { recipientEmail: 'bouncy@example.test' });
    const handle = handlerFor();
    sink.setFault({ kind: 'reject', code: 451, times: 1 });
    await handle(delivery(job.id));
    await t.db.insert(recipientSuppressions).values({ email: 'bouncy@example.test', reason: 'hard_bounce' });
    clockOffsetMs = 5_000;
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'hard_bounce' });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect((await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.state).toBe('released');
  });

  it('lets exactly one of two concurrent deliveries send while the first send is slow', async () => {
    const job = await insertTestJob(t.db);
    const corr = correlationOf(job.noticeKey);
    sink.setFault({ kind: 'stall', times: 1 });
    const first = handlerFor({}, 'worker-a')(delivery(job.id));
    await sink.waitFor(() => sink.stalled().some((m) => m.correlation === corr));
    const before = await metricValue(duplicatesSuppressed, { reason: 'ledger_claimed' });
    expect(await handlerFor({}, 'worker-b')(delivery(job.id))).toEqual({ ack: true });
    expect(await metricValue(duplicatesSuppressed, { reason: 'ledger_claimed' })).toBe(before + 1);
    sink.releaseStalled();
    expect(await first).toEqual({ ack: true });
    expect(sink.countByCorrelation(corr)).toBe(1);
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent' });
    const attempts = await listAttemptsForJob(t.db, { jobId: job.id });
    expect(attempts.map((a) => [a.workerId, a.outcome])).toEqual([
      ['worker-b', 'suppressed_duplicate'],
      ['worker-a', 'sent'],
    ]);
  });

  it('wake-ups handled together share statements, yet each job is sent once, even when woken three times at once', async () => {
    const jobs = await Promise.all(Array.from({ length: 6 }, () => insertTestJob(t.db)));
    const handle = handlerFor({}, 'worker-batch');
    // One handler, every delivery started in the same tick: loads, claims and commits coalesce.
    const twice = jobs.slice(0, 2).flatMap((job) => [job, job, job]);
    const results = await Promise.all([...jobs, ...twice].map((job) => handle(delivery(job.id))));
    expect(results.every((r) => 'ack' in r && r.ack)).toBe(true);
    for (const job of jobs) {
      expect(sink.countByCorrelation(correlationOf(job.noticeKey)), job.id).toBe(1);
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent', attempts: 1 });
      expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent', claimedBy: 'worker-batch' });
    }
    for (const job of jobs.slice(0, 2)) {
      const outcomes = (await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => a.outcome).sort();
      // The extra wake-ups either lost the claim or found the job already sent.
      expect(outcomes.filter((o) => o === 'sent')).toEqual(['sent']);
      expect(outcomes).toHaveLength(4);
      expect(outcomes.every((o) => ['sent', 'suppressed_duplicate', 'discarded'].includes(o))).toBe(true);
    }
  });

  it('leaves an unknown outcome claimed, visible in quarantine, and a resend reuses the first code', async () => {
    const job = await insertTestJob(t.db);
    const corr = correlationOf(job.noticeKey);
    sink.setFault({ kind: 'drop-after-data', times: 1 });
    const handle = handlerFor();
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    const stuck = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(stuck).toMatchObject({ state: 'claimed' });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed', attempts: 1, lastErrorClass: 'connection_lost' });
    expect((await listQuarantined(t.db, { quarantineAfterMs: 0, limit: 500 })).map((q) => q.noticeKey)).toContain(job.noticeKey);
    expect((await listQuarantined(t.db, { quarantineAfterMs: 3_600_000, limit: 500 })).map((q) => q.noticeKey)).not.toContain(job.noticeKey);

    // Redelivery does not release or resend it.
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(corr)).toBe(1);

    expect(
      await resolveQuarantine(t.db, {
        action: 'release',
        selection: { keys: [job.noticeKey] },
        actor: 'oncall@example.test',
        reason: 'no provider trace; resend',
        quarantineAfterMs: 0,
      }),
    ).toEqual({ action: 'release', resolved: [job.noticeKey], skipped: 0 });
    expect(await handle(delivery(job.id))).toEqual({ ack: true });
    const messages = sink.messages().filter((m) => m.correlation === corr);
    expect(messages.map((m) => m.outcome)).toEqual(['dropped-after-data', 'accepted']);
    const [firstCode, secondCode] = messages.map((m) => codeIn(m.raw));
    expect(firstCode).toMatch(/^[A-Z2-9]{10}$/);
    expect(secondCode).toBe(firstCode);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent', oneTimeCode: firstCode });
  });

  it("links to the signed recipient page on PUBLIC_BASE_URL, expiring at the anchor (the job's own, else its event's); a resend keeps the first link and code", async () => {
    const direct = await insertTestJob(t.db);
    expect(await handlerFor()(delivery(direct.id))).toEqual({ ack: true });
    const [directMail] = sink.messages().filter((m) => m.correlation === correlationOf(direct.noticeKey));
    const directLink = recipientLinkIn(directMail?.raw ?? '') ?? '';
    // The compact link: 37 characters after the host.
    expect(directLink).toMatch(/^https:\/\/notices\.test\/r\/0p[A-Za-z0-9_-]{32}$/);
    expect(verifyRecipientToken({ secret: settings.secret, token: tokenOf(directLink) })).toEqual({
      ok: true,
      purpose: 'page',
      noticePrefix: direct.noticeKey.slice(0, 24),
      kid: '0',
    });
    // The row carries the anchor the producer posted (a day after the deadline here); without one the
    // link ends at the deadline (recipientPageExpiry, lib/recipient/notice-view.test.ts).
    expect(await linkedNotice(directLink)).toEqual({ noticeKey: direct.noticeKey, expiresAt: direct.anchorAt });
    expect(direct.anchorAt?.getTime()).toBeGreaterThan(direct.deadlineAt.getTime());
    expect(directMail?.raw).not.toContain('/cancel?');

    // A planned notice: its event's anchor (the charge) bounds the link. Sent, dropped, released, resent.
    const anchorAt = new Date(Date.now() + 30 * 3_600_000);
    const planned = await insertSentNotice(t.db, { anchorAt, withLedger: false });
    await t.pool.query(
      `update reminder_jobs set state = 'pending', due_at = now() - interval '1 minute', next_attempt_at = now() - interval '1 minute', window_earliest = now() - interval '1 hour', deadline_at = now() + interval '6 hours' where id = $1`,
      [planned.job.id],
    );
    const corr = correlationOf(planned.job.noticeKey);
    sink.setFault({ kind: 'drop-after-data', times: 1 });
    expect(await handlerFor()(delivery(planned.job.id))).toEqual({ ack: true });
    await resolveQuarantine(t.db, {
      action: 'release',
      selection: { keys: [planned.job.noticeKey] },
      actor: 'oncall@example.test',
      reason: 'no trace; resend',
      quarantineAfterMs: 0,
    });
    expect(await handlerFor()(delivery(planned.job.id))).toEqual({ ack: true });
    const mails = sink.messages().filter((m) => m.correlation === corr);
    expect(mails.map((m) => m.outcome)).toEqual(['dropped-after-data', 'accepted']);
    const [firstLink, secondLink] = mails.map((m) => recipientLinkIn(m.raw) ?? '');
    expect(await linkedNotice(firstLink ?? '')).toEqual({ noticeKey: planned.job.noticeKey, expiresAt: anchorAt });
    // The first mail's link and code are the resend's: the first email still works.
    expect(secondLink).toBe(firstLink);
    expect(codeIn(mails[0]?.raw ?? '')).toBe(codeIn(mails[1]?.raw ?? ''));
    expect(await getLedgerRow(t.db, { noticeKey: planned.job.noticeKey })).toMatchObject({ state: 'sent', oneTimeCode: codeIn(mails[0]?.raw ?? '') });
  });

  describe('the claim window (WORKER_CLAIM_WINDOW)', () => {
    const windowGauge = async (state: 'held' | 'waiting') => (await claimWindowNotices.get()).values.find((value) => value.labels.state === state)?.value ?? 0;
    const until = async (condition: () => Promise<boolean>) => {
      for (const started = Date.now(); !(await condition());) {
        if (Date.now() - started > 5_000) throw new Error('condition not met within 5 s');
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    /** The database's clock, which stamps claimed_at. */
    const databaseNow = async () => (await t.pool.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]?.now ?? new Date(Number.NaN);

    it('holds at most that many notices between claim and commit; the others claim as places free up, each sent once', async () => {
      const jobs = await Promise.all(Array.from({ length: 5 }, () => insertTestJob(t.db)));
      const handle = handlerFor({}, 'worker-window', { claimWindow: 2 });
      sink.setFault({ kind: 'stall' });
      const results = Promise.all(jobs.map((job) => handle(delivery(job.id))));
      await sink.waitFor(() => sink.stalled().length >= 2);
      // Two sends are held by the relay: only their notices are claimed.
      const rows = await Promise.all(jobs.map((job) => getLedgerRow(t.db, { noticeKey: job.noticeKey })));
      expect(rows.filter((row) => row !== null).map((row) => row?.state)).toEqual(['claimed', 'claimed']);
      const released = await databaseNow();
      sink.setFault({ kind: 'none' });
      sink.releaseStalled();
      expect((await results).every((r) => 'ack' in r && r.ack)).toBe(true);
      const claimedAt: number[] = [];
      for (const job of jobs) {
        expect(sink.countByCorrelation(correlationOf(job.noticeKey)), job.id).toBe(1);
        const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
        expect(row).toMatchObject({ state: 'sent', claimedBy: 'worker-window' });
        claimedAt.push(row?.claimedAt.getTime() ?? Number.NaN);
      }
      // The other three were claimed only once the relay let the first two go.
      expect(claimedAt.filter((at) => at >= released.getTime())).toHaveLength(3);
    });

    it('without one, every notice of the burst is claimed while the first sends are held (the control)', async () => {
      const jobs = await Promise.all(Array.from({ length: 5 }, () => insertTestJob(t.db)));
      const handle = handlerFor({}, 'worker-unbounded');
      sink.setFault({ kind: 'stall' });
      const results = Promise.all(jobs.map((job) => handle(delivery(job.id))));
      await sink.waitFor(() => sink.stalled().length >= 5);
      const rows = await Promise.all(jobs.map((job) => getLedgerRow(t.db, { noticeKey: job.noticeKey })));
      expect(rows.map((row) => row?.state)).toEqual(Array.from({ length: 5 }, () => 'claimed'));
      sink.setFault({ kind: 'none' });
      sink.releaseStalled();
      expect((await results).every((r) => 'ack' in r && r.ack)).toBe(true);
    });

    it('a delivery that expires while it waits for a place claims nothing and is handed back', async () => {
      const [held, waiting] = await Promise.all([insertTestJob(t.db), insertTestJob(t.db)]);
      if (!held || !waiting) throw new Error('no jobs');
      const handle = handlerFor({}, 'worker-window', { claimWindow: 1 });
      sink.setFault({ kind: 'stall' });
      const first = handle(delivery(held.id));
      await sink.waitFor(() => sink.stalled().length >= 1);
      const waitingBefore = await windowGauge('waiting');
      const visibility = new AbortController();
      // Settled as it ends (it ends while the test awaits the first).
      const second = handle(delivery(waiting.id, visibility.signal)).then(
        () => null,
        (error: unknown) => error,
      );
      await until(async () => (await windowGauge('waiting')) > waitingBefore);
      // Composed and waiting for the one place the relay holds: its visibility runs out.
      visibility.abort();
      sink.setFault({ kind: 'none' });
      sink.releaseStalled();
      expect(await first).toEqual({ ack: true });
      expect(await second).toBeInstanceOf(DeliveryAbortedError);
      expect(await getLedgerRow(t.db, { noticeKey: waiting.noticeKey })).toBeNull();
      expect(await readJob(t.db, waiting.id)).toMatchObject({ state: 'pending' });
      expect(sink.countByCorrelation(correlationOf(waiting.noticeKey))).toBe(0);
    });
  });

  it('does not claim when the delivery was aborted before the claim', async () => {
    const job = await insertTestJob(t.db);
    const controller = new AbortController();
    controller.abort();
    await expect(handlerFor()(delivery(job.id, controller.signal))).rejects.toBeInstanceOf(DeliveryAbortedError);
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeNull();
    expect((await readJob(t.db, job.id)).state).toBe('pending');
  });

  it('shadow mode sends a notice the ledger already has and counts it; enforce suppresses it', async () => {
    const shadowJob = await insertTestJob(t.db);
    const enforceJob = await insertTestJob(t.db);
    for (const job of [shadowJob, enforceJob]) {
      await insertBackfilledSent(t.db, {
        rows: [
          {
            noticeKey: job.noticeKey,
            noticeType: job.noticeType,
            identity: job.identity,
            revision: 0,
            jobId: job.id,
            sentAt: new Date(),
            providerMessageId: null,
            recipientDomain: null,
          },
        ],
      });
    }
    const before = await metricValue(wouldSuppress, { notice_type: 'renewal_notice_t72' });
    expect(await handlerFor({ mode: 'shadow' })(delivery(shadowJob.id))).toEqual({ ack: true });
    expect(await metricValue(wouldSuppress, { notice_type: 'renewal_notice_t72' })).toBe(before + 1);
    expect(sink.countByCorrelation(correlationOf(shadowJob.noticeKey))).toBe(1);
    expect(await readJob(t.db, shadowJob.id)).toMatchObject({ state: 'sent' });
    expect((await listAttemptsForJob(t.db, { jobId: shadowJob.id })).map((a) => [a.outcome, a.mode])).toEqual([
      ['would_suppress', 'shadow'],
      ['sent', 'shadow'],
    ]);
    // The backfilled row is untouched: shadow traffic never takes over someone else's claim.
    const [row] = await t.db.select().from(noticeLedger).where(eq(noticeLedger.noticeKey, shadowJob.noticeKey));
    expect(row?.source).toBe('backfill');

    expect(await handlerFor({ mode: 'enforce' })(delivery(enforceJob.id))).toEqual({ ack: true });
    expect(sink.countByCorrelation(correlationOf(enforceJob.noticeKey))).toBe(0);
    expect(await readJob(t.db, enforceJob.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'duplicate' });
  });

  it('applies policy to a claimed job whose claim was released: a suppression still wins', async () => {
    const job = await insertTestJob(t.db, { recipientEmail: 'released@example.test' });
    sink.setFault({ kind: 'drop-after-data', times: 1 });
    await handlerFor()(delivery(job.id));
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'claimed' });
    // The ledger row alone is released (as a console action might leave it); the job still says claimed.
    await t.db.update(noticeLedger).set({ state: 'released', claimToken: null }).where(eq(noticeLedger.noticeKey, job.noticeKey));
    await t.db.insert(recipientSuppressions).values({ email: 'released@example.test', reason: 'complaint' });
    expect(await handlerFor()(delivery(job.id))).toEqual({ ack: true });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'complaint' });
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
  });

  it('shares one token bucket per recipient domain across workers and defers when it is empty', async () => {
    const bucketA = await createDomainRateLimiter({ pool: t.pool, points: 1, windowSeconds: 60 });
    const bucketB = await createDomainRateLimiter({ pool: t.pool, points: 1, windowSeconds: 60 });
    const domain = `throttled-${Date.now()}.test`;
    const first = await insertTestJob(t.db, { recipientEmail: `a@${domain}` });
    const second = await insertTestJob(t.db, { recipientEmail: `b@${domain}` });
    const other = await insertTestJob(t.db, { recipientEmail: 'c@elsewhere.test' });
    const make = (rateLimiter: DomainRateLimiter, workerId: string) =>
      createWakeupHandler({
        db: t.db,
        mail: createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'n@notices.test', messageIdDomain: 'notices.test' }),
        rateLimiter,
        settings: { ...settings, maxTokenWaitMs: 0 },
        workerId,
        logger: createLogger('test', 'silent'),
        now,
      });
    expect(await make(bucketA, 'worker-a')(delivery(first.id))).toEqual({ ack: true });
    const throttled = await make(bucketB, 'worker-b')(delivery(second.id));
    expect(throttled).toMatchObject({ ack: true, wakeAt: expect.any(Date) });
    expect(await readJob(t.db, second.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await getLedgerRow(t.db, { noticeKey: second.noticeKey })).toBeNull();
    expect((await listAttemptsForJob(t.db, { jobId: second.id })).map((a) => [a.outcome, a.detail])).toEqual([['deferred', 'rate_limited']]);
    expect(await make(bucketB, 'worker-b')(delivery(other.id))).toEqual({ ack: true });
    expect((await readJob(t.db, other.id)).state).toBe('sent');
  });

  describe('consent: preferences, required notices, unknown mailboxes', () => {
    it('a courtesy notice carries RFC 8058 one-click headers with a signed unsubscribe token; a required one carries none', async () => {
      const courtesy = await insertTestJob(t.db);
      const required = await insertTestJob(t.db, { category: 'required' });
      const handle = handlerFor({ cancelBaseUrl: 'https://notices.test', unsubscribeMailbox: 'unsubscribe@notices.test' });
      await handle(delivery(courtesy.id));
      await handle(delivery(required.id));
      const [sent] = sink.messages().filter((m) => m.correlation === correlationOf(courtesy.noticeKey));
      expect(sent?.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      const header = sent?.headers['list-unsubscribe'] ?? '';
      const match = /^<https:\/\/notices\.test\/api\/recipient\/unsubscribe\/([^>]+)>, <mailto:unsubscribe@notices\.test\?subject=unsubscribe%20([^>]+)>$/.exec(
        header,
      );
      expect(match, header).not.toBeNull();
      const token = decodeURIComponent(match?.[1] ?? '');
      expect(decodeURIComponent(match?.[2] ?? '')).toBe(token);
      expect(token).toMatch(/^0u[A-Za-z0-9_-]{32}$/);
      const verdict = verifyRecipientToken({ secret: settings.secret, token });
      expect(verdict).toMatchObject({ ok: true, purpose: 'unsubscribe', noticePrefix: courtesy.noticeKey.slice(0, 24) });
      if (!verdict.ok) throw new Error('the unsubscribe token verifies');
      expect(await findLinkedNoticeKey(t.db, verdict)).toBe(courtesy.noticeKey);
      // Valid for a year after the window closes (the latest the notice can be sent): mailbox providers offer the button on old mail.
      const expiresAt = linkExpiry({ purpose: 'unsubscribe', anchorAt: null, deadlineAt: courtesy.deadlineAt });
      expect(expiresAt.getTime() - courtesy.deadlineAt.getTime()).toBe(365 * 86_400_000);
      const [requiredMail] = sink.messages().filter((m) => m.correlation === correlationOf(required.noticeKey));
      expect(requiredMail).toBeDefined();
      expect(requiredMail?.headers['list-unsubscribe']).toBeUndefined();
      expect(requiredMail?.headers['list-unsubscribe-post']).toBeUndefined();
    });

    it('without UNSUBSCRIBE_MAILBOX the header offers the https URI only', async () => {
      const job = await insertTestJob(t.db);
      await handlerFor()(delivery(job.id));
      const [sent] = sink.messages().filter((m) => m.correlation === correlationOf(job.noticeKey));
      expect(sent?.headers['list-unsubscribe']).toMatch(/^<https:\/\/notices\.test\/api\/recipient\/unsubscribe\/0u[A-Za-z0-9_-]{32}>$/);
    });

    it('suppresses a courtesy notice to an opted-out recipient as unsubscribed and still sends a required one, even past an old unsubscribed entry', async () => {
      const email = `opted-out-${Date.now()}@example.test`;
      await setPreference(t.db, { recipient: email, category: 'courtesy', channel: 'email', state: 'opted_out', source: 'one_click' });
      await t.db.insert(recipientSuppressions).values({ email, reason: 'unsubscribed' });
      const courtesy = await insertTestJob(t.db, { recipientEmail: email.toUpperCase() });
      const required = await insertTestJob(t.db, { recipientEmail: email, category: 'required' });
      const handle = handlerFor();
      await handle(delivery(courtesy.id));
      await handle(delivery(required.id));
      expect(await readJob(t.db, courtesy.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'unsubscribed' });
      expect(await getLedgerRow(t.db, { noticeKey: courtesy.noticeKey })).toBeNull();
      expect(sink.countByCorrelation(correlationOf(courtesy.noticeKey))).toBe(0);
      expect(await readJob(t.db, required.id)).toMatchObject({ state: 'sent' });
      expect(sink.countByCorrelation(correlationOf(required.noticeKey))).toBe(1);
    });

    it('a hard bounce, a complaint or a manual entry stops a required notice too', async () => {
      for (const reason of ['hard_bounce', 'complaint', 'manual'] as const) {
        const email = `stopped-${reason}-${Date.now()}@example.test`;
        await t.db.insert(recipientSuppressions).values({ email, reason });
        const required = await insertTestJob(t.db, { recipientEmail: email, category: 'required' });
        await handlerFor()(delivery(required.id));
        expect(await readJob(t.db, required.id)).toMatchObject({ state: 'suppressed' });
        expect(sink.countByCorrelation(correlationOf(required.noticeKey))).toBe(0);
      }
    });

    it('a retryable failure, then an opt-out, then the retry: suppressed, never sent', async () => {
      const job = await insertTestJob(t.db);
      const handle = handlerFor();
      sink.setFault({ kind: 'reject', code: 451, times: 1 });
      await handle(delivery(job.id));
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', attempts: 1 });
      await setPreference(t.db, { recipient: job.recipientEmail ?? '', category: 'courtesy', channel: 'email', state: 'opted_out', source: 'producer_api' });
      clockOffsetMs = 5_000;
      expect(await handle(delivery(job.id))).toEqual({ ack: true });
      expect(await readJob(t.db, job.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'unsubscribed' });
      expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
      expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => [a.outcome, a.detail])).toEqual([
        ['retryable_failure', null],
        ['suppressed_policy', 'opted_out'],
      ]);
    });

    it('SMTP 550 5.1.1 (user unknown) fails the notice and suppresses the address as a hard bounce, in the same transaction', async () => {
      const unknownSink = await startSmtpSink({ unknownMailboxes: (recipient) => recipient.startsWith('nobody-') });
      try {
        const email = `nobody-${Date.now()}@example.test`;
        const job = await insertTestJob(t.db, { recipientEmail: email });
        const mail = createMailTransport({ smtpUrl: unknownSink.url, timeoutMs: 5_000, from: 'n@notices.test', messageIdDomain: 'notices.test' });
        const handle = createWakeupHandler({ db: t.db, mail, rateLimiter: limiter, settings, workerId: 'w', logger: createLogger('test', 'silent'), now });
        expect(await handle(delivery(job.id))).toEqual({ ack: true });
        expect(await readJob(t.db, job.id)).toMatchObject({ state: 'failed', lastErrorClass: 'smtp_550' });
        expect(await findRecipientSuppression(t.db, { email })).toMatchObject({ reason: 'hard_bounce', note: 'smtp 550 mailbox unknown' });
        expect((await listAttemptsForJob(t.db, { jobId: job.id })).map((a) => [a.outcome, a.detail])).toEqual([['permanent_failure', 'mailbox_unknown']]);
        // The next notice to the address, required or not, is not attempted.
        const next = await insertTestJob(t.db, { recipientEmail: email, category: 'required' });
        await handle(delivery(next.id));
        expect(await readJob(t.db, next.id)).toMatchObject({ state: 'suppressed', suppressionReason: 'hard_bounce' });
        expect(unknownSink.rejections()).toHaveLength(1);
        // Any other 550 ("mailbox unavailable" is also a policy refusal) fails the notice and suppresses nothing.
        const other = await insertTestJob(t.db);
        sink.setFault({ kind: 'reject', code: 550, times: 1, at: 'rcpt' });
        await handlerFor()(delivery(other.id));
        expect(await readJob(t.db, other.id)).toMatchObject({ state: 'failed' });
        expect(await findRecipientSuppression(t.db, { email: other.recipientEmail ?? '' })).toBeNull();
      } finally {
        await unknownSink.stop();
      }
    });
  });
});
