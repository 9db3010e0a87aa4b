import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listAttemptsForJob } from '@/db/queries/attempts';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { preferenceFor } from '@/db/queries/preferences';
import type { JobRow } from '@/db/schema';
import { loadNoticeView } from '@/lib/console/lookup';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { startTwilioPeer, type TwilioPeer } from '@/testing/twilio-peer';
import { spawnWorker, type WorkerProcess } from '@/testing/worker-process';

/**
 * A required text that can never reach its number goes by email, once; a courtesy one does not.
 * Real worker processes, the Twilio peer (STOP is its documented 21610) and the SMTP sink, each
 * counting per correlation: for one business fact, at most one message over both channels.
 * The operator's configuration adds a required type that goes by SMS (the shipped required types
 * go by email), `emailWhenSmsRefused` left to its default.
 */

const root = path.resolve(import.meta.dirname, '..');

function writeConfigWithRequiredSms(): string {
  const shipped = JSON.parse(readFileSync(path.join(root, 'config/notice-ledger.json'), 'utf8')) as {
    noticeTypes: Record<string, Record<string, unknown>>;
    templates: { directory: string; definitions: Record<string, Record<string, unknown>> };
  };
  shipped.noticeTypes.payment_notice_sms = {
    label: 'Pre-debit notice by text (required)',
    event: 'reconciliation.exception',
    identity: ['account_id', 'reconciliation_id', 'exception_id'],
    channel: 'sms',
    category: 'required',
    obligation: 'pre_debit_notice',
    template: 'payment_recovery',
    correction: 'always',
  };
  // The template the test type borrows says it carries what the pre-debit rules ask for.
  shipped.templates.definitions.payment_recovery = {
    ...shipped.templates.definitions.payment_recovery,
    meets: ['amount', 'debit_date', 'merchant_name', 'opt_out'],
  };
  shipped.templates.directory = path.join(root, 'config/templates');
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'sms-fallback-')), 'notice-ledger.json');
  writeFileSync(file, JSON.stringify(shipped));
  return file;
}

// Before anything reads it: insertTestJob derives keys and payloads from the same file as the worker.
process.env.NOTICE_CONFIG = writeConfigWithRequiredSms();

let t: TestDatabase;
let sink: SmtpSink;
let peer: TwilioPeer;
const workers: WorkerProcess[] = [];
let publisher: ReturnType<typeof createPgBossQueue>;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: t.url,
    NOTICE_CONFIG: process.env.NOTICE_CONFIG ?? '',
    SMTP_URL: sink.url,
    VISIBILITY_TIMEOUT: '2s',
    WORKER_CONCURRENCY: '2',
    TWILIO_ACCOUNT_SID: peer.accountSid,
    TWILIO_AUTH_TOKEN: peer.authToken,
    TWILIO_FROM: '+15005550006',
    TWILIO_API_BASE_URL: peer.baseUrl,
    PUBLIC_BASE_URL: 'http://127.0.0.1:9',
    ...extra,
  };
}

const payload = { customer_name: 'Ada Lovelace', amount: '42.00', currency: 'EUR', reference: 'RC-2026-0042' };

async function textJob(type: 'payment_notice_sms' | 'payment_recovery', phone: string): Promise<JobRow> {
  const id = randomBytes(4).toString('hex');
  return insertTestJob(t.db, {
    fact: { type, identity: { account_id: `acct_${id}`, reconciliation_id: `rec_${id}`, exception_id: `exc_${id}` }, revision: 0 },
    channel: 'sms',
    recipientPhone: phone,
    recipientEmail: `ada_${id}@example.test`,
    category: type === 'payment_notice_sms' ? 'required' : 'courtesy',
    payload,
  });
}

async function outcomes(jobId: string): Promise<string[]> {
  return (await listAttemptsForJob(t.db, { jobId })).map((attempt) => `${attempt.outcome}${attempt.detail ? `:${attempt.detail}` : ''}`);
}

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  peer = await startTwilioPeer();
  peer.setCallbacks('drop');
  publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 2_000 });
  await publisher.start();
});

afterAll(async () => {
  for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  await Promise.all(workers.map((worker) => worker.exited));
  await publisher?.stop();
  await peer?.stop();
  await sink?.stop();
  await t?.drop();
});

describe('a required SMS refused for good falls back to email (real worker, Twilio peer, SMTP sink)', () => {
  it('STOP: the required notice goes by email exactly once with its one-time code; a courtesy one is not sent at all; an honest number gets its text', async () => {
    const worker = spawnWorker(env());
    workers.push(worker);
    await worker.ready;
    const stopped = '+14155550101';
    peer.unsubscribe(stopped);
    const required = await textJob('payment_notice_sms', stopped);
    const courtesy = await textJob('payment_recovery', stopped);
    const honest = await textJob('payment_notice_sms', '+14155550177');
    for (const job of [required, courtesy, honest]) await publisher.publish({ jobId: job.id });

    await vi.waitFor(
      async () => {
        expect((await readJob(t.db, required.id)).state).toBe('sent');
        expect((await readJob(t.db, courtesy.id)).state).toBe('failed');
        expect((await readJob(t.db, honest.id)).state).toBe('sent');
      },
      { timeout: 30_000, interval: 200 },
    );

    // The required notice: no text (Twilio refused it before creating one), one email, the same notice.
    const corr = correlationOf(required.noticeKey);
    expect(peer.countByCorrelation(corr)).toBe(0);
    expect(sink.countByCorrelation(corr)).toBe(1);
    const email = sink.messages().find((message) => message.correlation === corr);
    expect(email?.to).toEqual([required.recipientEmail]);
    const ledger = await getLedgerRow(t.db, { noticeKey: required.noticeKey });
    expect(ledger?.state).toBe('sent');
    expect(ledger?.oneTimeCode).toMatch(/\S/);
    expect(email?.raw).toContain(ledger?.oneTimeCode);
    expect(await readJob(t.db, required.id)).toMatchObject({ channel: 'email', smsRefusedCode: '21610', recipientPhone: stopped });
    expect(await outcomes(required.id)).toEqual(['permanent_failure:email_fallback:21610', 'sent']);
    // Lookup tells support what happened, in words.
    const view = await loadNoticeView(t.db, { noticeKey: required.noticeKey, secret: process.env.NOTICE_KEY_SECRET ?? '', messageIdDomain: 'example.test' });
    const scheduled = view?.timeline.find((entry) => entry.kind === 'scheduled');
    expect(scheduled?.facts).toContainEqual({ label: 'channel', value: 'SMS, then email (the text was refused, Twilio 21610)' });
    expect(view?.timeline.map((entry) => entry.title)).toContain(
      'Text message refused for good (the recipient replied STOP; Twilio 21610): this required notice goes by email instead, as the same notice with the same code',
    );
    // The STOP is still recorded as the number's courtesy opt-out.
    expect(await preferenceFor(t.db, { recipient: stopped, category: 'courtesy', channel: 'sms' })).toBe('opted_out');

    // The courtesy text: refused, failed, and nothing by email.
    const courtesyCorr = correlationOf(courtesy.noticeKey);
    expect(peer.countByCorrelation(courtesyCorr)).toBe(0);
    expect(sink.countByCorrelation(courtesyCorr)).toBe(0);
    expect(await readJob(t.db, courtesy.id)).toMatchObject({ channel: 'sms', smsRefusedCode: null, lastErrorClass: 'twilio_21610' });

    // Control: a required text to a number that takes texts is a text, and no email.
    expect(peer.countByCorrelation(correlationOf(honest.noticeKey))).toBe(1);
    expect(sink.countByCorrelation(correlationOf(honest.noticeKey))).toBe(0);

    // No number and no code in the worker's log.
    expect(JSON.stringify(worker.logs())).not.toContain(stopped);
    expect(JSON.stringify(worker.logs())).not.toContain(ledger?.oneTimeCode ?? '-');
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('a required text with no email address to fall back to fails as before, and sends nothing', async () => {
    const worker = spawnWorker(env());
    workers.push(worker);
    await worker.ready;
    const stopped = '+14155550102';
    peer.unsubscribe(stopped);
    const job = await textJob('payment_notice_sms', stopped);
    await t.pool.query('update reminder_jobs set recipient_email = null where id = $1', [job.id]);
    await publisher.publish({ jobId: job.id });
    await vi.waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('failed'), { timeout: 30_000, interval: 200 });
    expect(peer.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(0);
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('SIGKILL right after the fallback committed: the next worker sends the email once, with the same code', async () => {
    const stopped = '+14155550103';
    peer.unsubscribe(stopped);
    const job = await textJob('payment_notice_sms', stopped);
    const first = spawnWorker(env({ WORKER_CRASH_AT: 'after_commit' }));
    workers.push(first);
    await first.ready;
    await publisher.publish({ jobId: job.id });
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The fallback is durable: the job is an email, pending, its claim released; nothing was sent yet.
    expect(await readJob(t.db, job.id)).toMatchObject({ state: 'pending', channel: 'email', smsRefusedCode: '21610' });
    const released = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(released?.state).toBe('released');
    const corr = correlationOf(job.noticeKey);
    expect(sink.countByCorrelation(corr)).toBe(0);

    const second = spawnWorker(env());
    workers.push(second);
    await second.ready;
    await vi.waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('sent'), { timeout: 30_000, interval: 200 });
    expect(peer.countByCorrelation(corr)).toBe(0);
    expect(sink.countByCorrelation(corr)).toBe(1);
    const sent = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(sent?.oneTimeCode).toBe(released?.oneTimeCode);
    expect(sink.messages().find((message) => message.correlation === corr)?.raw).toContain(released?.oneTimeCode);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  }, 90_000);
});
