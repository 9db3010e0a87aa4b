import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { runScript, scriptEnv } from '@/testing/run-script';

/**
 * A real worker process with a bad notice configuration: it stops at start-up (exit 1) with the
 * field the file got wrong, before it touches the database or the queue. Without Twilio, only a
 * type that goes by SMS alone stops it; the shipped types go by email then.
 */

let t: TestDatabase;
let dir = '';

beforeAll(async () => {
  t = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'notice-config-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.drop();
});

describe('worker start-up with NOTICE_CONFIG', () => {
  it('refuses a bad file, naming the field, and leaves the database as it was', async () => {
    const shipped = JSON.parse(await readFile('config/notice-ledger.json', 'utf8')) as { noticeTypes: Record<string, { window?: { from: string } }> };
    const window = shipped.noticeTypes.renewal_notice_t72?.window;
    if (window) window.from = '72 hours';
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify(shipped));
    const run = await runScript({ script: 'worker/main.ts', args: [], env: { ...scriptEnv(t.url), NOTICE_CONFIG: file } });
    expect(run.code).toBe(1);
    expect(run.stderr + run.stdout).toContain(`Invalid notice configuration in ${file}`);
    expect(run.stderr + run.stdout).toContain('noticeTypes.renewal_notice_t72.window.from: "72 hours" is not an offset');
    const boss = await t.pool.query<{ present: boolean }>(`select to_regclass('pgboss.job') is not null as present`);
    expect(boss.rows[0]?.present).toBe(false);
  });

  it('refuses to start when a type goes only by SMS and Twilio is not configured, naming the types and the settings', async () => {
    const shipped = JSON.parse(await readFile('config/notice-ledger.json', 'utf8')) as {
      noticeTypes: Record<string, { fallbackChannel?: string }>;
      templates: { directory: string };
    };
    // The operator declares payment recovery SMS-only: no email to fall back on.
    delete shipped.noticeTypes.payment_recovery?.fallbackChannel;
    shipped.templates.directory = path.resolve('config/templates');
    const file = path.join(dir, 'sms-only.json');
    await writeFile(file, JSON.stringify(shipped));
    const run = await runScript({
      script: 'worker/main.ts',
      args: [],
      env: { ...scriptEnv(t.url), NOTICE_CONFIG: file, TWILIO_AUTH_TOKEN: 'only-the-token-0123456789' },
    });
    expect(run.code).toBe(1);
    const output = run.stderr + run.stdout;
    expect(output).toContain('notice types payment_recovery go by SMS');
    expect(output).toContain('TWILIO_ACCOUNT_SID, TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID required');
    expect(output).not.toContain('only-the-token-0123456789');
    const boss = await t.pool.query<{ present: boolean }>(`select to_regclass('pgboss.job') is not null as present`);
    expect(boss.rows[0]?.present).toBe(false);
  });

  it('an email-only deployment (SMTP_URL, no Twilio) starts with one warning, and the shipped payment recovery planned as a text goes by email once', async () => {
    const sink = await startSmtpSink();
    const worker = spawnWorker({
      DATABASE_URL: t.url,
      SMTP_URL: sink.url,
      TWILIO_ACCOUNT_SID: '',
      TWILIO_AUTH_TOKEN: '',
      TWILIO_FROM: '',
      TWILIO_API_BASE_URL: '',
    });
    const publisher = createPgBossQueue({ url: t.url, visibilityTimeoutMs: 2_000 });
    try {
      await worker.ready;
      const warnings = worker.logs().filter((line) => String(line.msg).includes('Twilio is not configured'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, noticeTypes: ['payment_recovery'] });
      await publisher.start();
      const id = randomBytes(4).toString('hex');
      // Planned as a text (the console chose SMS for a recipient with a phone), sent where Twilio is not configured.
      const job = await insertTestJob(t.db, {
        fact: { type: 'payment_recovery', identity: { account_id: `acct_${id}`, reconciliation_id: `rec_${id}`, exception_id: `exc_${id}` }, revision: 0 },
        channel: 'sms',
        recipientPhone: '+14155550123',
        recipientEmail: `ada_${id}@example.test`,
      });
      await publisher.publish({ jobId: job.id });
      await vi.waitFor(async () => expect((await readJob(t.db, job.id)).state).toBe('sent'), { timeout: 30_000, interval: 200 });
      expect(sink.countByCorrelation(correlationOf(job.noticeKey))).toBe(1);
      expect(await readJob(t.db, job.id)).toMatchObject({ channel: 'email', smsRefusedCode: 'sms_not_configured' });
      expect(await worker.stop()).toEqual({ code: 0, signal: null });
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await worker.exited;
      await publisher.stop();
      await sink.stop();
    }
  }, 90_000);
});
