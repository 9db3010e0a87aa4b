import { randomBytes, randomUUID } from 'node:crypto';
import { createDb, createPool } from '@/db/client';
import { correlationOf } from '@/lib/ledger/notice-key';
import { oneTimeCodeIn, recipientLinkIn } from '@/testing/recipient';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { insertJob } from '@/e2e/fixtures/console-data';
import { expect, snap, test } from '@/e2e/fixtures/test';

const HOUR = 3_600_000;
const hours = (n: number) => new Date(Date.now() + n * HOUR).toISOString();
/** A `datetime-local` value in UTC, as the Failures page reads it. */
const local = (date: Date) => date.toISOString().slice(0, 16);

/**
 * On-call acts on failed notices through the console under `next start`, with the real worker
 * process and the SMTP sink. A notice the relay refused (550) is retried from /failures and
 * arrives with the same one-time code and link as the refused first mail. A bulk retry above
 * BULK_RETRY_APPROVAL_ABOVE (3 in the e2e console, scripts/e2e.ts) waits for a second person:
 * on-call may not approve it, a manager approves and runs it from /replays, and each notice
 * arrives once.
 */
test('on-call retries a failed notice: it arrives with the first mail’s code and link', async ({ browser, baseURL, seed, pageAs, sql }, testInfo) => {
  test.setTimeout(120_000);
  const subscription = `sub_e2e_retry_${randomUUID().slice(0, 8)}`;
  const targets = new Set<string>();
  const sink = await startSmtpSink();
  // The relay refuses this notice's first mail after reading it (550 at the end of DATA): permanent, so the notice fails.
  sink.setFault({
    kind: 'per-message',
    decide: (message) =>
      message.correlation && targets.has(message.correlation) && message.previousAttempts === 0 ? { kind: 'reject', code: 550 } : { kind: 'none' },
  });
  const context = await browser.newContext();
  const posted = await context.request.post('/api/v1/reminders', {
    headers: { authorization: `Bearer ${seed.producer.token}` },
    data: {
      type: 'renewal_notice_t72',
      identity: { subscription_id: subscription, period_start: '2027-01-01' },
      recipient: { email: `${subscription}@customers.example.com`, timeZone: 'UTC' },
      dueAt: hours(0),
      deadlineAt: hours(26),
      anchorAt: hours(50),
      payload: { customer_name: 'Ana Silva', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
      source: 'e2e-failures',
    },
  });
  expect(posted.status(), await posted.text()).toBe(201);
  const { id: jobId, noticeKey } = (await posted.json()) as { id: string; noticeKey: string };
  await context.close();
  const corr = correlationOf(noticeKey);
  targets.add(corr);
  const worker = spawnWorker({
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
    SMTP_URL: sink.url,
    MESSAGE_ID_DOMAIN: 'notices.example.com',
    PUBLIC_BASE_URL: baseURL ?? '',
    RATE_LIMIT_PER_DOMAIN: '1000',
  });
  try {
    await worker.ready;
    await expect
      .poll(async () => (await sql<{ state: string }>('select state from reminder_jobs where id = $1', [jobId]))[0]?.state, { timeout: 30_000 })
      .toBe('failed');
    const first = sink.rejections().find((rejection) => rejection.correlation === corr);
    const firstCode = oneTimeCodeIn(first?.raw ?? '');
    const firstLink = recipientLinkIn(first?.raw ?? '');
    expect(firstCode).toMatch(/^[A-Z2-9]{10}$/);
    expect(firstLink).toContain('/r/');

    const oncall = await pageAs('oncall');
    await oncall.setViewportSize({ width: 1280, height: 900 });
    await oncall.goto('/failures?kind=failed');
    await expect(oncall.getByRole('link', { name: 'Failures' })).toBeVisible();
    const row = oncall.locator(`[data-testid="failure-row"][data-subject="${subscription}"]`);
    await expect(row.getByTestId('failure-reason')).toHaveText('Failed: the mail server refused it (SMTP 550)');
    await snap(oncall, testInfo, 'failures-desktop');
    await oncall.setViewportSize({ width: 390, height: 844 });
    const overflow = await oncall.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, '/failures scrolls sideways on a phone').toBeLessThanOrEqual(0);
    await snap(oncall, testInfo, 'failures-mobile');
    await oncall.setViewportSize({ width: 1280, height: 900 });

    await row.getByTestId('retry-open').click();
    await row.getByTestId('retry-reason').fill('The relay refused it by mistake; confirmed with the mail team');
    await row.getByTestId('retry-confirm').click();
    await expect(oncall.getByTestId('failures-result')).toContainText('with its first one-time code and link');

    await expect.poll(() => sink.countByCorrelation(corr), { timeout: 30_000 }).toBe(1);
    const sent = sink.messages().find((message) => message.correlation === corr);
    expect(oneTimeCodeIn(sent?.raw ?? '')).toBe(firstCode);
    expect(recipientLinkIn(sent?.raw ?? '')).toBe(firstLink);
    await expect.poll(async () => (await sql<{ state: string }>('select state from reminder_jobs where id = $1', [jobId]))[0]?.state).toBe('sent');
    const audit = await sql<{ actor: string; action: string }>('select actor, action from audit_log where target_id = $1 order by id', [jobId]);
    expect(audit.map((entry) => entry.action)).toContain('failure.retry');
    expect(audit.find((entry) => entry.action === 'failure.retry')?.actor).toBe(seed.users.oncall.email);

    // A filter that matches nothing says so, and how to see everything again.
    await oncall.goto('/failures?errorClass=no_such_class');
    await expect(oncall.getByTestId('failures-empty')).toContainText('No notice matches this filter');
    await snap(oncall, testInfo, 'failures-empty-filter');
  } finally {
    await worker.stop();
    await sink.stop();
  }
});

test('a bulk retry above the threshold waits for a second person, who approves it; each notice then arrives once', async ({ pageAs, apiAs, sql }, testInfo) => {
  test.setTimeout(120_000);
  const secret = process.env.NOTICE_KEY_SECRET ?? '';
  const tag = randomBytes(3).toString('hex');
  const errorClass = `e2e_relay_down_${tag}`;
  const from = new Date(Date.now() - 60_000);
  const pool = createPool(process.env.DATABASE_URL ?? '', { max: 2 });
  const db = createDb(pool);
  const keys: string[] = [];
  for (let i = 0; i < 4; i += 1) {
    const job = await insertJob(db, {
      fact: { type: 'renewal_notice_t72', identity: { subscription_id: `sub_bulk_${tag}_${i}`, period_start: '2027-01-01' }, revision: 0 },
      secret,
      recipientEmail: `bulk${i}@${tag}.example.com`,
      dueAt: new Date(Date.now() - HOUR),
      deadlineAt: new Date(Date.now() + 24 * HOUR),
      state: 'failed',
      source: 'e2e-failures',
    });
    keys.push(job.key);
  }
  await pool.end();
  // What the send path writes when it fails a notice: the error class, one attempt, the instant (and the charge its template shows).
  await sql(
    "update reminder_jobs set last_error_class = $1, attempts = 1, updated_at = now(), anchor_at = deadline_at + interval '1 day' where source = $2 and state = $3 and recipient_email like $4",
    [errorClass, 'e2e-failures', 'failed', `%@${tag}.example.com`],
  );
  const to = new Date(Date.now() + 60 * 60_000);
  const sink = await startSmtpSink();
  const worker = spawnWorker({
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    NOTICE_KEY_SECRET: secret,
    SMTP_URL: sink.url,
    MESSAGE_ID_DOMAIN: 'notices.example.com',
    RATE_LIMIT_PER_DOMAIN: '1000',
    REPLAY_EVERY: '200ms',
  });
  try {
    const oncall = await pageAs('oncall');
    await oncall.goto(`/failures?errorClass=${errorClass}&from=${local(from)}&to=${local(to)}`);
    await expect(oncall.getByTestId('failure-row')).toHaveCount(4);
    const bulk = oncall.getByTestId('bulk-retry');
    await expect(bulk.getByTestId('bulk-error-class')).toHaveValue(errorClass);
    await bulk.getByTestId('bulk-preview').click();
    await expect(bulk.getByTestId('bulk-preview-result')).toContainText('4 failed notices');
    await expect(bulk.getByTestId('bulk-preview-result')).toContainText('more than 3');
    await bulk.getByTestId('bulk-reason').fill('Relay outage is over; retry what failed during it');
    await bulk.getByTestId('bulk-confirm').click();
    await expect(oncall.getByTestId('failures-result')).toContainText("waits for a manager's approval");
    await snap(oncall, testInfo, 'failures-bulk-requested');
    const batchId = /bulk retry (retry-[0-9a-f-]+)/.exec(await oncall.getByTestId('failures-result').innerText())?.[1] ?? '';
    const [replay] = await sql<{ id: string; state: string }>('select id, state from replays where batch_id = $1', [batchId]);
    if (!replay) throw new Error(`no replay ${batchId}`);
    expect(replay.state).toBe('requested');
    const states = await sql<{ state: string }>('select distinct state from reminder_jobs where last_error_class = $1', [errorClass]);
    expect(states).toEqual([{ state: 'failed' }]);

    // On-call may not approve it (role), and nothing moves.
    const oncallApi = await apiAs('oncall');
    const byOncall = await oncallApi.post('/api/console/replays/decide', { data: { id: replay.id, decision: 'approve', reason: 'approving my own' } });
    expect(byOncall.status()).toBe(403);
    expect((await sql<{ state: string }>('select state from replays where id = $1', [replay.id]))[0]?.state).toBe('requested');

    // A manager approves it and runs it; the worker sends each notice once.
    const manager = await pageAs('manager');
    await manager.goto('/replays');
    const row = manager.locator(`[data-batch="${batchId}"]`);
    await expect(row).toContainText('bulk retry of failed notices');
    await manager.getByTestId(`reason-${replay.id}`).fill('Outage confirmed in the incident channel');
    await manager.getByTestId(`approve-${replay.id}`).click();
    await expect(row.getByTestId('replay-state')).toHaveText('approved');
    await worker.ready;
    await manager.getByTestId(`run-${replay.id}`).click();
    for (const key of keys) await expect.poll(() => sink.countByCorrelation(correlationOf(key)), { timeout: 45_000 }).toBe(1);
    await expect(row.getByTestId('replay-state')).toHaveText('completed', { timeout: 30_000 });
    await snap(manager, testInfo, 'failures-bulk-approved');
    const audit = await sql<{ action: string }>('select action from audit_log where target_id = $1 order by id', [batchId]);
    expect(audit.map((entry) => entry.action)).toEqual(['failure.bulk_retry_request', 'replay.approve', 'replay.run', 'replay.complete']);
  } finally {
    await worker.stop();
    await sink.stop();
  }
});
