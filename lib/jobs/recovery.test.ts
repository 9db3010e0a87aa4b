import { and, eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow, listQuarantined } from '@/db/queries/ledger/read';
import { resolveQuarantine } from '@/lib/console/quarantine';
import { deliveryAttempts, reminderJobs } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { readJob } from '@/testing/jobs';
import { spawnWorker } from '@/testing/worker-process';
import { createLogger } from '@/lib/log';
import { correlationOf } from '@/lib/ledger/notice-key';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { createMailTransport } from '@/lib/mail/transport';
import { createPgBossQueue, type PgBossQueue } from '@/lib/queue/pgboss';
import type { Delivery } from '@/lib/queue/types';
import { createWakeupHandler } from './handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from './rate-limit';
import { loadNoticeConfig } from '@/lib/windows/load-config';
import { scheduleRequest, type ScheduleRequest } from '@/lib/api/producer';
import { scheduleNotice } from '@/lib/planning/schedule-notice';
import { sweepOnce } from './sweeper';
import { activeNoticeConfig } from '@/lib/windows/active';

/**
 * The seed's recovery test, one scenario per transition an operator meets: the same message
 * twice around a frozen due time, a worker killed after the provider accepted but before the
 * ack, a provider timeout followed by a permanent rejection, the nightly producer run twice,
 * and a restart with pending jobs whose wake-ups are gone. The expected result is never "zero
 * duplicate deliveries at the transport": it is one business decision per notice key, a
 * visible attempt history, and a sweeper that recovers what the queue lost.
 *
 * The clock is injected (`clock`), never slept on; the one real-process scenario waits for
 * conditions with deadlines.
 */

const MINUTE = 60_000;
const secret = process.env.NOTICE_KEY_SECRET ?? '';

let t: TestDatabase;
let sink: SmtpSink;
let limiter: DomainRateLimiter;
let queue: PgBossQueue;
let clockMs = Date.now();
const clock = () => new Date(clockMs);

function handler(timeoutMs = 5_000) {
  const mail = createMailTransport({ smtpUrl: sink.url, timeoutMs, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });
  return createWakeupHandler({
    db: t.db,
    mail,
    rateLimiter: limiter,
    workerId: 'recovery-test',
    logger: createLogger('recovery-test', 'silent'),
    now: clock,
    settings: {
      mode: 'enforce',
      noticeConfig: activeNoticeConfig().config,
      retryBaseMs: 1_000,
      retryCapMs: 10_000,
      maxAttempts: 3,
      secret,
      cancelBaseUrl: 'https://notices.test',
      maxTokenWaitMs: 1_000,
    },
  });
}

function delivery(jobId: string, messageId: string): Delivery {
  return { wakeup: { jobId }, messageId, signal: new AbortController().signal };
}

let counter = 0;
function request(overrides: Partial<Record<string, unknown>> = {}): ScheduleRequest {
  counter += 1;
  return scheduleRequest.parse({
    type: 'payment_recovery',
    identity: { account_id: 'acct_7', reconciliation_id: 'rec_2026_11_29', exception_id: `exc_${counter}` },
    recipient: { email: `billing+${counter}@example.test`, timeZone: 'UTC' },
    dueAt: new Date(clockMs + 10 * MINUTE).toISOString(),
    deadlineAt: new Date(clockMs + 24 * 60 * MINUTE).toISOString(),
    payload: { customer_name: 'Ada Lovelace', amount: '120.00', currency: 'EUR', reference: 'RC-2026-0042' },
    source: 'nightly-reconciliation',
    ...overrides,
  });
}

async function schedule(body: ScheduleRequest, publisher: PgBossQueue = queue) {
  const result = await scheduleNotice({
    db: t.db,
    publisher,
    request: body,
    actor: 'token:recovery',
    now: clock(),
    secret,
    maxDelayMs: 60 * 24 * 60 * MINUTE,
    notices: loadNoticeConfig('config/notice-ledger.json'),
  });
  if (result.kind !== 'created' && result.kind !== 'existing') throw new Error(`schedule refused: ${result.kind}`);
  return result;
}

const outcomes = async (jobId: string) => (await listAttemptsForJob(t.db, { jobId })).map((attempt) => attempt.outcome);

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 1_000 });
  queue = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 2_000, retryDelaySeconds: 0, pollingIntervalMs: 100 });
  await queue.start();
});

afterAll(async () => {
  await queue?.stop();
  await sink?.stop();
  await t?.drop();
});

beforeEach(() => {
  clockMs = Date.now();
  sink.setFault({ kind: 'none' });
});

describe('recovery (controlled clock)', () => {
  it('the same message delivered twice around a frozen due time: deferred, sent once, then discarded', async () => {
    const { job } = await schedule(request());
    const corr = correlationOf(job.noticeKey);
    const handle = handler();

    // A few minutes early (clock drift, an early broker): defer to due_at, no attempt spent.
    clockMs = job.dueAt.getTime() - 3 * MINUTE;
    expect(await handle(delivery(job.id, 'msg-1'))).toEqual({ ack: true, wakeAt: job.dueAt });
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', attempts: 0 });

    clockMs = job.dueAt.getTime() + 1_000;
    expect(await handle(delivery(job.id, 'msg-2'))).toEqual({ ack: true });
    // The broker hands out the very same message again (its ack was lost).
    expect(await handle(delivery(job.id, 'msg-2'))).toEqual({ ack: true });

    expect(sink.countByCorrelation(corr)).toBe(1);
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'sent', attempts: 1 });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'sent' });
    expect(await outcomes(job.id)).toEqual(['deferred', 'sent', 'discarded']);
  });

  it('a provider timeout, then a permanent rejection: never resent on its own, one decision, full history', async () => {
    const { job } = await schedule(request());
    const corr = correlationOf(job.noticeKey);
    clockMs = job.dueAt.getTime() + 1_000;
    // The relay takes the message and never answers: the client times out, outcome unknown.
    sink.setFault({ kind: 'stall', times: 1 });
    expect(await handler(400)(delivery(job.id, 'msg-a'))).toEqual({ ack: true });
    expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'claimed' });
    expect((await listQuarantined(t.db, { quarantineAfterMs: 0, limit: 500 })).map((row) => row.noticeKey)).toContain(job.noticeKey);

    // A redelivery must not resend an unknown outcome.
    sink.setFault({ kind: 'none' });
    expect(await handler()(delivery(job.id, 'msg-a'))).toEqual({ ack: true });
    expect(sink.messages().filter((m) => m.correlation === corr)).toHaveLength(0);

    // On-call finds no provider trace and releases it; the resend meets a permanent rejection.
    expect(
      await resolveQuarantine(t.db, {
        action: 'release',
        selection: { keys: [job.noticeKey] },
        actor: 'oncall@example.test',
        reason: 'no provider trace; resend',
        quarantineAfterMs: 0,
      }),
    ).toEqual({ action: 'release', resolved: [job.noticeKey], skipped: 0 });
    clockMs = Math.max(clockMs, Date.now()) + 1_000;
    sink.setFault({ kind: 'reject', code: 550, times: 1 });
    expect(await handler()(delivery(job.id, 'msg-b'))).toEqual({ ack: true });

    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'failed', lastErrorClass: 'smtp_550' });
    expect(sink.messages().filter((m) => m.correlation === corr && m.outcome === 'accepted')).toHaveLength(0);
    expect(await outcomes(job.id)).toEqual(['unknown', 'suppressed_duplicate', 'permanent_failure']);
    sink.releaseStalled();
  });

  it('the nightly producer run twice: the second run makes no new jobs and no new wake-ups', async () => {
    const batch = Array.from({ length: 25 }, () => request({ source: 'nightly-2026-11-29' }));
    const first = await Promise.all(batch.map((body) => schedule(body)));
    expect(first.every((result) => result.kind === 'created')).toBe(true);
    const wakeups = async () => (await queue.liveWakeupJobIds(first.map((result) => result.job.id))).size;
    expect(await wakeups()).toBe(25);

    // Re-run two hours later (the operator was not sure the first run finished).
    clockMs += 120 * MINUTE;
    const second = await Promise.all(batch.map((body) => schedule({ ...body, source: 'nightly-2026-11-29-rerun' })));
    expect(second.every((result) => result.kind === 'existing')).toBe(true);
    expect(second.map((result) => result.job.id)).toEqual(first.map((result) => result.job.id));
    const jobs = await t.db.$count(reminderJobs, sql`source = 'nightly-2026-11-29'`);
    expect(jobs).toBe(25);
    expect(await wakeups()).toBe(25);
    const { rows } = await t.pool.query(`select count(*)::int as n from pgboss.job where name = $1 and data->>'jobId' = any($2::text[])`, [
      queue.queueName,
      first.map((r) => r.job.id),
    ]);
    expect(rows[0]?.n).toBe(25);
  });

  it('a restart with pending jobs and no wake-ups: the sweeper re-publishes them and each is sent once', async () => {
    const start = clockMs;
    const scheduled = await Promise.all(Array.from({ length: 5 }, () => schedule(request({ source: 'restart-test' }))));
    const ids = scheduled.map((result) => result.job.id);
    const dueAt = scheduled[0]?.job.dueAt ?? new Date();

    // While the wake-ups are alive the sweeper finds the jobs but publishes nothing new.
    clockMs = dueAt.getTime() + 10 * MINUTE;
    const early = await sweepOnce({ db: t.db, queue, now: clock(), graceMs: 4_000 });
    expect(early.republished).toBe(0);

    // The queue loses everything (restored from an old backup, purged by hand, …).
    await t.pool.query(`delete from pgboss.job where name = $1`, [queue.queueName]);
    expect((await queue.liveWakeupJobIds(ids)).size).toBe(0);

    // Within the grace window after the last wake-up nothing is re-published yet.
    clockMs += 1_000;
    expect((await sweepOnce({ db: t.db, queue, now: clock(), graceMs: 4_000 })).found).toBe(0);

    // The restarted worker: a fresh consumer with the send path, and a sweep after the window.
    const restarted = createPgBossQueue({ url: t.url, queueName: queue.queueName, visibilityTimeoutMs: 2_000, pollingIntervalMs: 100 });
    await restarted.start();
    try {
      await restarted.consume(handler(), { concurrency: 4 });
      clockMs += 10_000;
      const swept = await sweepOnce({ db: t.db, queue: restarted, now: clock(), graceMs: 4_000 });
      expect(swept.republished).toBeGreaterThanOrEqual(5);
      await vi.waitFor(
        async () => {
          const rows = await t.db.select({ id: reminderJobs.id, state: reminderJobs.state }).from(reminderJobs).where(inArray(reminderJobs.id, ids));
          expect(rows.filter((row) => row.state === 'sent')).toHaveLength(5);
        },
        { timeout: 20_000, interval: 100 },
      );
    } finally {
      await restarted.stop();
    }
    for (const result of scheduled) expect(sink.countByCorrelation(correlationOf(result.job.noticeKey))).toBe(1);
    expect(start).toBeLessThan(clockMs);
  });
});

describe('recovery (real process)', () => {
  it('a worker SIGKILLed after the provider accepted, before the ack: the redelivery does not resend', async () => {
    const env = { DATABASE_URL: t.url, SMTP_URL: sink.url, VISIBILITY_TIMEOUT: '2s', QUARANTINE_AFTER: '1s', WORKER_CONCURRENCY: '1' };
    // Due now by the real clock: the worker process has no injected clock.
    clockMs = Date.now();
    const { job } = await schedule(request({ dueAt: new Date(clockMs - MINUTE).toISOString() }));
    const corr = correlationOf(job.noticeKey);
    const workers = [spawnWorker({ ...env, WORKER_CRASH_AT: 'after_send' })];
    try {
      const first = workers[0];
      if (!first) throw new Error('no worker');
      expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(sink.countByCorrelation(corr)).toBe(1);

      const second = spawnWorker(env);
      workers.push(second);
      const { workerId } = await second.ready;
      await vi.waitFor(
        async () => {
          const rows = await t.db
            .select()
            .from(deliveryAttempts)
            .where(and(eq(deliveryAttempts.jobId, job.id), eq(deliveryAttempts.workerId, workerId)));
          expect(rows.map((row) => row.outcome)).toEqual(['suppressed_duplicate']);
        },
        { timeout: 30_000, interval: 200 },
      );
      expect(sink.countByCorrelation(corr)).toBe(1);
      // One business decision, kept open for on-call with the provider's evidence: claimed.
      expect(await getLedgerRow(t.db, { noticeKey: job.noticeKey })).toMatchObject({ state: 'claimed' });
      expect(await second.stop()).toEqual({ code: 0, signal: null });
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exited));
    }
  }, 90_000);
});
