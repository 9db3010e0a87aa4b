import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '@/db/embedded';
import { createUser } from '@/db/queries/users';
import { deliveryAttempts, noticeLedger, reminderJobs } from '@/db/schema';
import { createApiToken } from '@/lib/auth/api-tokens';
import { hashPassword } from '@/lib/auth/password';
import { correlationOf } from '@/lib/ledger/notice-key';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer, type ConsoleServer } from '@/testing/console-server';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { metricValue, spawnWorker, type WorkerProcess } from '@/testing/worker-process';

/**
 * Issue 23's outage, as an operator runs it: the built console (`next start`) takes the notices
 * through the producer API, two real worker processes send them, and the SMTP relay refuses
 * connections (nothing listening) for longer than the old attempt budget (RETRY_BASE 1 s,
 * RETRY_CAP 4 s: 8 attempts took ~23 s and then the notice was `failed`), then comes back.
 * Before the breaker and the pool of lib/mail/smtp-pool.ts, every worker wedged (sends hung in
 * nodemailer's pool for good) and nothing arrived; a notice that kept failing fast ran out of
 * attempts. The same with the relay refusing our login (535): nothing may fail.
 */

const NOTICES = 20;
const OUTAGE_MS = 30_000;

let t: TestDatabase;
let server: ConsoleServer;
let token: string;
const consoleUser = { email: 'support-outage@example.com', password: 'outage-support-password-1' };

beforeAll(async () => {
  await ensureProductionBuild({ root: path.resolve(import.meta.dirname, '..'), log: (line) => console.log(`relay-outage: ${line}`) });
  t = await createTestDatabase();
  await createUser(t.db, { email: consoleUser.email, name: 'Support', role: 'support', passwordHash: await hashPassword(consoleUser.password) });
  server = await startConsoleServer({
    env: { DATABASE_URL: t.url, NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '', NEXTAUTH_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' },
  });
  ({ token } = await createApiToken(t.db, { name: 'outage producer', createdBy: null, actor: 'test' }));
}, 600_000);

afterAll(async () => {
  await server?.stop();
  await t?.drop();
});

async function scheduleNotices(run: string): Promise<string[]> {
  const now = Date.now();
  const ids: string[] = [];
  for (let index = 0; index < NOTICES; index += 1) {
    const response = await fetch(`${server.url}/api/v1/reminders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'payment_recovery',
        identity: { account_id: `acct_${run}`, reconciliation_id: `rec_${run}`, exception_id: `exc_${String(index)}` },
        recipient: { email: `customer${String(index)}@${run}.example.com`, timeZone: 'UTC' },
        dueAt: new Date(now).toISOString(),
        // A long window: the breaker, not the window, must keep these notices alive.
        deadlineAt: new Date(now + 24 * 3_600_000).toISOString(),
        payload: { customer_name: 'Ada', amount: '12.00', currency: 'EUR', reference: `${run}-${String(index)}` },
        source: 'outage-test',
      }),
    });
    expect(response.status, server.logTail()).toBe(201);
    ids.push(((await response.json()) as { id: string }).id);
  }
  return ids;
}

function startWorkers(smtpUrl: string): WorkerProcess[] {
  const env = {
    DATABASE_URL: t.url,
    SMTP_URL: smtpUrl,
    SMTP_TIMEOUT: '1s',
    RETRY_BASE: '1s',
    RETRY_CAP: '4s',
    MAX_ATTEMPTS: '8',
    TRANSPORT_BREAKER_AFTER: '3',
    TRANSPORT_PROBE_BASE: '500ms',
    TRANSPORT_PROBE_CAP: '2s',
    WORKER_CONCURRENCY: '8',
    VISIBILITY_TIMEOUT: '20s',
  };
  return [spawnWorker(env), spawnWorker(env)];
}

/** Scrapes each worker until its gauge has read `value` once; resolves with the instant. */
async function gaugeReads(worker: WorkerProcess, value: number, timeoutMs: number): Promise<void> {
  await vi.waitFor(async () => expect(metricValue(await worker.scrape(), 'notice_ledger_transport_up', { transport: 'smtp' })).toBe(value), {
    timeout: timeoutMs,
    interval: 100,
  });
}

/** Each worker's open intervals from its own log lines: [opened, closed] in its clock. */
function openIntervals(worker: WorkerProcess): Array<[number, number]> {
  const intervals: Array<[number, number]> = [];
  let opened: number | null = null;
  for (const line of worker.logs()) {
    const msg = String(line.msg);
    if (msg.startsWith('transport breaker opened')) opened = Number(line.time);
    if (msg.startsWith('transport breaker closed') && opened !== null) {
      intervals.push([opened, Number(line.time)]);
      opened = null;
    }
  }
  if (opened !== null) intervals.push([opened, Number.POSITIVE_INFINITY]);
  return intervals;
}

async function expectNoAttemptWhileOpen(workers: WorkerProcess[], jobIds: string[]): Promise<void> {
  const counted = await t.db
    .select({
      workerId: deliveryAttempts.workerId,
      outcome: deliveryAttempts.outcome,
      startedAt: deliveryAttempts.startedAt,
      finishedAt: deliveryAttempts.finishedAt,
      detail: deliveryAttempts.detail,
    })
    .from(deliveryAttempts)
    .where(inArray(deliveryAttempts.jobId, jobIds));
  for (const worker of workers) {
    const { workerId } = await worker.ready;
    const intervals = openIntervals(worker);
    expect(intervals.length, `worker ${workerId} never opened its breaker`).toBeGreaterThan(0);
    const during = counted.filter(
      (row) =>
        row.workerId === workerId &&
        row.outcome !== 'deferred' &&
        // Wholly inside an open interval. startedAt is when the handler began, before its load and
        // claim: a handler begun in the last milliseconds before the probe closed the breaker checks
        // it after the close and sends rightly (eight such sends at the close once failed this test).
        intervals.some(([from, to]) => row.startedAt.getTime() > from && (row.finishedAt ?? row.startedAt).getTime() < to),
    );
    expect(during, `attempts counted by ${workerId} while its breaker was open`).toEqual([]);
  }
}

async function stopWithinGrace(workers: WorkerProcess[]): Promise<void> {
  const startedAt = Date.now();
  const exits = await Promise.all(workers.map((worker) => worker.stop()));
  // WORKER_STOP_GRACE's default.
  expect(Date.now() - startedAt).toBeLessThan(30_000);
  expect(exits).toEqual(workers.map(() => ({ code: 0, signal: null })));
}

async function expectAllSentOnce(sink: SmtpSink, jobIds: string[]): Promise<void> {
  const jobs = await t.db.select().from(reminderJobs).where(inArray(reminderJobs.id, jobIds));
  expect(jobs.map((job) => job.state)).toEqual(jobIds.map(() => 'sent'));
  for (const job of jobs) expect(sink.countByCorrelation(correlationOf(job.noticeKey)), job.noticeKey).toBe(1);
  const ledger = await t.db
    .select({ state: noticeLedger.state })
    .from(noticeLedger)
    .where(
      inArray(
        noticeLedger.noticeKey,
        jobs.map((job) => job.noticeKey),
      ),
    );
  expect(ledger.map((row) => row.state)).toEqual(jobIds.map(() => 'sent'));
  const outcomes = await t.db.select({ outcome: deliveryAttempts.outcome }).from(deliveryAttempts).where(inArray(deliveryAttempts.jobId, jobIds));
  expect(outcomes.filter((row) => row.outcome === 'unknown' || row.outcome === 'permanent_failure')).toEqual([]);
}

/** The console's overview as a signed-in support user sees it (next-auth's own credentials flow). */
async function consolePage(pathname: string): Promise<string> {
  const cookies = new Map<string, string>();
  const remember = (response: Response) => {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      if (name) cookies.set(name.trim(), value.join('='));
    }
  };
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const csrfResponse = await fetch(`${server.url}/api/auth/csrf`);
  remember(csrfResponse);
  const { csrfToken } = (await csrfResponse.json()) as { csrfToken: string };
  const signIn = await fetch(`${server.url}/api/auth/callback/credentials`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader() },
    body: new URLSearchParams({ csrfToken, email: consoleUser.email, password: consoleUser.password, callbackUrl: `${server.url}/`, json: 'true' }),
    redirect: 'manual',
  });
  remember(signIn);
  const page = await fetch(`${server.url}${pathname}`, { headers: { cookie: cookieHeader() }, redirect: 'manual' });
  expect(page.status, server.logTail()).toBe(200);
  return page.text();
}

describe('an SMTP relay outage through next start and real workers', () => {
  it('refusing connections past the old attempt budget, then back: every notice once, none failed or quarantined, no attempt while open', async () => {
    const port = await freePort();
    const sink = await startSmtpSink({ port });
    await sink.goDown();
    const ids = await scheduleNotices('refused');
    const workers = startWorkers(sink.url);
    try {
      await Promise.all(workers.map((worker) => worker.ready));
      await Promise.all(workers.map((worker) => gaugeReads(worker, 0, 20_000)));
      const downAt = Date.now();
      await vi.waitFor(async () => expect(await consolePage('/')).toContain('SMTP unreachable'), { timeout: 10_000, interval: 500 });
      // Longer than the old budget: 8 attempts at 1, 2, 4, 4, … s would all have failed by now.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - downAt))));
      const during = await t.db.select({ state: reminderJobs.state, attempts: reminderJobs.attempts }).from(reminderJobs).where(inArray(reminderJobs.id, ids));
      expect(during.filter((job) => job.state === 'failed')).toEqual([]);
      expect(sink.messages()).toHaveLength(0);

      await sink.comeBack();
      await sink.waitFor(NOTICES, 60_000);
      await Promise.all(workers.map((worker) => gaugeReads(worker, 1, 10_000)));
      await vi.waitFor(async () => expectAllSentOnce(sink, ids), { timeout: 20_000, interval: 250 });
      await expectNoAttemptWhileOpen(workers, ids);
      // The breaker bounded what the outage cost each notice: the sends in flight when it opened, and nothing after.
      const attempts = await t.db.select({ attempts: reminderJobs.attempts }).from(reminderJobs).where(inArray(reminderJobs.id, ids));
      expect(Math.max(...attempts.map((job) => job.attempts))).toBeLessThan(8);
      await vi.waitFor(async () => expect(await consolePage('/')).not.toContain('data-testid="transport-down"'), { timeout: 10_000, interval: 500 });
      await stopWithinGrace(workers);
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
      await sink.stop();
    }
  });

  it('refusing our login (535): nothing fails, the banner says what to fix, and the notices go once the login works', async () => {
    const sink = await startSmtpSink({ auth: { user: 'relay-user', pass: 'relay-pass' } });
    sink.setFault({ kind: 'refuse-auth' });
    const ids = await scheduleNotices('login');
    const workers = startWorkers(`smtp://relay-user:relay-pass@127.0.0.1:${String(sink.port)}`);
    try {
      await Promise.all(workers.map((worker) => worker.ready));
      await Promise.all(workers.map((worker) => gaugeReads(worker, 0, 20_000)));
      await vi.waitFor(async () => expect(await consolePage('/')).toContain('SMTP login refused (535)'), { timeout: 10_000, interval: 500 });
      expect(await consolePage('/lookup')).toContain('check SMTP_URL credentials');
      const during = await t.db.select({ state: reminderJobs.state, attempts: reminderJobs.attempts }).from(reminderJobs).where(inArray(reminderJobs.id, ids));
      expect(during.filter((job) => job.state === 'failed')).toEqual([]);
      // A refused login is not the notice's fault: no attempt is counted for it.
      expect(during.map((job) => job.attempts)).toEqual(ids.map(() => 0));

      sink.setFault({ kind: 'none' });
      await sink.waitFor(NOTICES, 60_000);
      await Promise.all(workers.map((worker) => gaugeReads(worker, 1, 10_000)));
      await vi.waitFor(async () => expectAllSentOnce(sink, ids), { timeout: 20_000, interval: 250 });
      await expectNoAttemptWhileOpen(workers, ids);
      await stopWithinGrace(workers);
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
      await sink.stop();
    }
  });
}, 300_000);
