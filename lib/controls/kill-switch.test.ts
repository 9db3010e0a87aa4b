import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { listAuditEntries } from '@/db/queries/audit';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { createWakeupHandler } from '@/lib/jobs/handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from '@/lib/jobs/rate-limit';
import { createLogger } from '@/lib/log';
import { createMailTransport, type MailTransport } from '@/lib/mail/transport';
import { registry } from '@/lib/metrics/registry';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { listPauseViews, setPause } from './service';
import { startWorkerControls, type WorkerControls } from './worker-controls';

/**
 * The kill switch through the real send path: real PostgreSQL, the real SMTP sink, and the
 * worker's own controls reader refreshing from runtime_controls (no restart, no injected state).
 */

let t: TestDatabase;
let sink: SmtpSink;
let mail: MailTransport;
let limiter: DomainRateLimiter;
let controls: WorkerControls;
const refreshMs = 200;

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  mail = createMailTransport({ smtpUrl: sink.url, timeoutMs: 2_000, from: 'n@notices.test', messageIdDomain: 'notices.test', maxConnections: 2 });
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
  controls = await startWorkerControls({ db: t.db, refreshMs, logger: createLogger('test', 'silent') });
});

afterAll(async () => {
  await controls?.stop();
  mail?.close();
  await sink?.stop();
  await t?.drop();
});

function handler() {
  return createWakeupHandler({
    db: t.db,
    mail,
    rateLimiter: limiter,
    controls,
    workerId: 'kill-switch-test',
    logger: createLogger('test', 'silent'),
    settings: {
      mode: 'enforce',
      noticeConfig: activeNoticeConfig().config,
      retryBaseMs: 1_000,
      retryCapMs: 10_000,
      maxAttempts: 8,
      secret: process.env.NOTICE_KEY_SECRET ?? '',
      cancelBaseUrl: 'https://notices.test',
      maxTokenWaitMs: 1_000,
    },
  });
}

/** A deferred job is not due before its next attempt: wait for that time to pass (a condition, not a sleep). */
async function dueAgain(jobId: string): Promise<void> {
  const { nextAttemptAt } = await readJob(t.db, jobId);
  await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(nextAttemptAt.getTime()), { timeout: 5_000, interval: 20 });
}

const wake = (jobId: string) => handler()({ wakeup: { jobId }, messageId: `ks-${jobId}`, signal: new AbortController().signal });

async function pausedGauge(): Promise<{ labels: Record<string, string | number>; value: number }[]> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'notice_ledger_sending_paused');
  return (metric?.values ?? []) as { labels: Record<string, string | number>; value: number }[];
}

describe('the kill switch', () => {
  it('a paused type sends nothing, claims nothing, counts no attempt, and resumes without a restart', async () => {
    const job = await insertTestJob(t.db);
    const other = await insertTestJob(t.db, { channel: 'email' });
    const sent = sink.messages().length;

    await setPause(t.db, {
      action: 'pause',
      target: { scope: 'notice_type', noticeType: job.noticeType },
      reason: 'incident 42: wrong amounts',
      actor: 'op@example.com',
    });
    // The worker's reader picks it up on its own refresh.
    await vi.waitFor(() => expect(controls.current().pauses.map((p) => p.name)).toEqual([`pause:notice_type:${job.noticeType}`]), { timeout: 5_000 });
    expect(await pausedGauge()).toEqual([expect.objectContaining({ labels: { scope: 'notice_type', target: job.noticeType }, value: 1 })]);

    const before = Date.now();
    const result = await wake(job.id);
    expect(result.ack).toBe(true);
    const wakeAt = 'wakeAt' in result ? result.wakeAt : undefined;
    // Deferred by one refresh: the wake-up comes back soon enough to see a resume.
    expect(wakeAt?.getTime()).toBeGreaterThanOrEqual(before + refreshMs - 50);
    expect(wakeAt?.getTime()).toBeLessThanOrEqual(Date.now() + refreshMs + 50);
    expect(sink.messages().length).toBe(sent);
    const paused = await readJob(t.db, job.id);
    expect({ state: paused.state, attempts: paused.attempts, deadlineAt: paused.deadlineAt }).toEqual({
      state: 'pending',
      attempts: 0,
      deadlineAt: job.deadlineAt,
    });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toBeFalsy();
    expect(await listAttemptsForJob(t.db, { jobId: job.id })).toEqual([]);

    // What the pause costs: the unsent notices of that type.
    const views = await listPauseViews(t.db, { horizonMs: 365 * 86_400_000 });
    expect(views).toEqual([
      expect.objectContaining({ label: `notice type ${job.noticeType}`, reason: 'incident 42: wrong amounts', changedBy: 'op@example.com' }),
    ]);
    expect(views[0]?.inScope).toBeGreaterThanOrEqual(2);
    expect(views[0]?.closingWithinHorizon).toBe(views[0]?.inScope);

    await setPause(t.db, {
      action: 'resume',
      target: { scope: 'notice_type', noticeType: job.noticeType },
      reason: 'incident 42 fixed',
      actor: 'op@example.com',
    });
    await vi.waitFor(() => expect(controls.current().pauses).toEqual([]), { timeout: 5_000 });
    expect(await pausedGauge()).toEqual([]);
    await dueAgain(job.id);
    await wake(job.id);
    expect((await readJob(t.db, job.id)).state).toBe('sent');
    expect(sink.messages().length).toBe(sent + 1);
    await wake(other.id);
    expect(sink.messages().length).toBe(sent + 2);

    const audit = await listAuditEntries(t.db, { filter: { target: `pause:notice_type:${job.noticeType}` }, limit: 10 });
    expect(audit.map((row) => [row.action, row.actor, row.reason])).toEqual([
      ['sending.resume', 'op@example.com', 'incident 42 fixed'],
      ['sending.pause', 'op@example.com', 'incident 42: wrong amounts'],
    ]);
  });

  it('a pause of all sending stops every type; a pause of the sms channel leaves email alone (control)', async () => {
    const email = await insertTestJob(t.db);
    const sent = sink.messages().length;
    await setPause(t.db, { action: 'pause', target: { scope: 'channel', channel: 'sms' }, reason: 'twilio incident', actor: 'op@example.com' });
    await controls.refresh();
    await wake(email.id);
    expect(sink.messages().length).toBe(sent + 1);

    const next = await insertTestJob(t.db);
    await setPause(t.db, { action: 'pause', target: { scope: 'all' }, reason: 'stop everything', actor: 'op@example.com' });
    await controls.refresh();
    await wake(next.id);
    expect(sink.messages().length).toBe(sent + 1);
    expect((await readJob(t.db, next.id)).attempts).toBe(0);
    await setPause(t.db, { action: 'resume', target: { scope: 'all' }, reason: 'over', actor: 'op@example.com' });
    await setPause(t.db, { action: 'resume', target: { scope: 'channel', channel: 'sms' }, reason: 'over', actor: 'op@example.com' });
    await controls.refresh();
    await dueAgain(next.id);
    await wake(next.id);
    expect(sink.messages().length).toBe(sent + 2);
  });
});
