import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { createApiToken } from '@/lib/auth/api-tokens';
import { correlationOf } from '@/lib/ledger/notice-key';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer, type ConsoleServer } from '@/testing/console-server';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { readJob } from '@/testing/jobs';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { spawnWorker, type WorkerProcess } from '@/testing/worker-process';

/**
 * The reconciliation state travels with every payment recovery, whichever door it came in by,
 * as a producer meets it: the console under `next start`, a real worker, the SMTP sink. A
 * recovery planned by POST /api/v1/events cites its exception (the event type's evidenceRef,
 * `recon:{exception_id}`, or the one the producer names), so resolving the exception suppresses
 * it; one resolved before it was even planned is suppressed by the worker's re-check before the
 * claim. A nightly run posted twice with recomputed times is answered 409 naming the notice
 * already scheduled and its state.
 */

let t: TestDatabase;
let server: ConsoleServer;
let sink: SmtpSink;
let worker: WorkerProcess | undefined;
let token = '';

beforeAll(async () => {
  await ensureProductionBuild({ root: path.resolve(import.meta.dirname, '..'), log: (line) => console.log(`events-evidence: ${line}`) });
  t = await createTestDatabase();
  sink = await startSmtpSink();
  server = await startConsoleServer({
    env: { DATABASE_URL: t.url, NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '', NEXTAUTH_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' },
  });
  ({ token } = await createApiToken(t.db, { name: 'nightly reconciliation', createdBy: null, actor: 'test' }));
}, 900_000);

afterAll(async () => {
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  await worker?.exited;
  await server?.stop();
  await sink?.stop();
  await t?.drop();
});

type Answer = { status: number; body: Record<string, unknown> };

async function call(method: string, route: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const run = randomBytes(3).toString('hex');
const payload = { customer_name: 'Ada Lovelace', amount: '49.00', currency: 'EUR', reference: 'RC-2026-0042' };

function exceptionEvent(exception: string, extra: Record<string, unknown> = {}, anchorAt = new Date()) {
  return {
    type: 'reconciliation.exception',
    identity: { account_id: `acct_${run}`, reconciliation_id: `recon_${run}`, exception_id: exception },
    anchorAt: `${anchorAt.toISOString().slice(0, 19)}Z`,
    recipient: { email: `${exception}@example.com`, region: 'DE', timeZone: 'Europe/Berlin', locale: 'en' },
    payload,
    source: 'nightly-reconciliation',
    ...extra,
  };
}

/** Posts the event; its one planned payment recovery's job id. */
async function planRecovery(exception: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await call('POST', '/api/v1/events', exceptionEvent(exception, extra));
  expect(answer.status, server.logTail()).toBe(201);
  const planned = answer.body.planned as { noticeType: string; jobId: string }[];
  expect(planned.map((notice) => notice.noticeType)).toEqual(['payment_recovery']);
  return planned[0]?.jobId ?? '';
}

async function resolve(ref: string): Promise<string[]> {
  const answer = await call('POST', `/api/v1/evidence/${encodeURIComponent(ref)}/resolve`, { reason: 'paid on the second attempt' });
  expect(answer.status).toBe(200);
  return answer.body.suppressedJobIds as string[];
}

describe('payment recovery planned from an event, the exception resolved (next start, real worker)', () => {
  const jobs: Record<string, string> = {};

  it('resolving the exception suppresses the recovery planned from its event, by the formed or the named reference, and by the reminders door too', async () => {
    // The event names no reference: the event type forms recon:{exception_id}.
    jobs.formed = await planRecovery(`exc_formed_${run}`);
    expect((await readJob(t.db, jobs.formed)).evidenceRef).toBe(`recon:exc_formed_${run}`);
    expect(await resolve(`recon:exc_formed_${run}`)).toEqual([jobs.formed]);

    // The producer names its own.
    jobs.named = await planRecovery(`exc_named_${run}`, { evidenceRef: `case:${run}/42` });
    expect(await resolve(`case:${run}/42`)).toEqual([jobs.named]);

    // POST /api/v1/reminders without evidenceRef cites the same formed reference.
    const reminder = await call('POST', '/api/v1/reminders', {
      type: 'payment_recovery',
      identity: { account_id: `acct_${run}`, reconciliation_id: `recon_${run}`, exception_id: `exc_reminder_${run}` },
      recipient: { email: 'reminder@example.com', timeZone: 'Europe/Berlin' },
      dueAt: new Date(Date.now() - 1_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      deadlineAt: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      payload,
      source: 'nightly-reconciliation',
    });
    expect(reminder.status).toBe(201);
    jobs.reminder = String(reminder.body.id);
    expect(await resolve(`recon:exc_reminder_${run}`)).toEqual([jobs.reminder]);

    // Resolved before the event arrived: the job is planned, and the worker's re-check stops it.
    expect(await resolve(`recon:exc_early_${run}`)).toEqual([]);
    jobs.early = await planRecovery(`exc_early_${run}`);

    // Control: an exception nobody resolved.
    jobs.open = await planRecovery(`exc_open_${run}`);
  });

  it('the worker sends only the unresolved one, once; the others reach neither the sink nor a claim', async () => {
    worker = spawnWorker({ DATABASE_URL: t.url, SMTP_URL: sink.url, WORKER_CONCURRENCY: '2' });
    await worker.ready;
    await vi.waitFor(
      async () => {
        expect((await readJob(t.db, jobs.open ?? '')).state).toBe('sent');
        expect(await readJob(t.db, jobs.early ?? '')).toMatchObject({ state: 'suppressed', suppressionReason: 'evidence_resolved' });
      },
      { timeout: 60_000, interval: 250 },
    );
    const open = await readJob(t.db, jobs.open ?? '');
    expect(sink.countByCorrelation(correlationOf(open.noticeKey))).toBe(1);
    for (const name of ['formed', 'named', 'reminder', 'early']) {
      const job = await readJob(t.db, jobs[name] ?? '');
      expect(job.state, name).toBe('suppressed');
      expect(sink.countByCorrelation(correlationOf(job.noticeKey)), name).toBe(0);
    }
    const early = (await listAttemptsForJob(t.db, { jobId: jobs.early ?? '' })).map((attempt) => `${attempt.outcome}:${attempt.detail ?? ''}`);
    expect(early).toEqual(['suppressed_policy:evidence_resolved']);
    const ledger = await t.pool.query<{ count: string }>('select count(*) from notice_ledger');
    expect(Number(ledger.rows[0]?.count)).toBe(1);
  }, 90_000);

  it('a nightly run posted twice with recomputed times: 409 naming the notice already scheduled and its state, by either door', async () => {
    // The events door: the same exception, revision 0, an anchor recomputed a few minutes later.
    const again = await call('POST', '/api/v1/events', exceptionEvent(`exc_open_${run}`, {}, new Date(Date.now() + 300_000)));
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('event_conflict');
    const open = await readJob(t.db, jobs.open ?? '');
    expect((again.body.details as { notices: unknown }).notices).toEqual([
      { noticeType: 'payment_recovery', jobId: open.id, noticeKey: open.noticeKey, state: 'sent' },
    ]);

    // The reminders door: the same fact with dueAt and deadlineAt computed again.
    const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d+Z$/, 'Z');
    const reminder = (dueAt: string, deadlineAt: string) => ({
      type: 'payment_recovery',
      identity: { account_id: `acct_${run}`, reconciliation_id: `recon_${run}`, exception_id: `exc_twice_${run}` },
      recipient: { email: 'twice@example.com', timeZone: 'Europe/Berlin' },
      dueAt,
      deadlineAt,
      payload,
      source: 'nightly-reconciliation',
    });
    const first = await call('POST', '/api/v1/reminders', reminder(at(3_600_000), at(86_400_000)));
    expect(first.status).toBe(201);
    const second = await call('POST', '/api/v1/reminders', reminder(at(3_660_000), at(86_460_000)));
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({
      error: 'notice_conflict',
      details: { jobId: first.body.id, noticeKey: first.body.noticeKey, state: 'pending', fields: ['dueAt', 'deadlineAt'] },
    });
  });
});
