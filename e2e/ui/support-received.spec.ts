import { randomUUID } from 'node:crypto';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { expect, snap, snapElement, test } from '@/e2e/fixtures/test';

const HOUR = 3_600_000;
const hours = (n: number) => new Date(Date.now() + n * HOUR).toISOString();

/**
 * "What the customer received" (issue 30 item 5) under `next start` with the real worker
 * process and the SMTP sink: an English and a German notice are scheduled through the producer
 * API and sent; support opens each in the lookup and reads the re-render — the subject the sink
 * received, the body in a sandboxed frame, the text beside it — marked as a re-render from the
 * recorded template version, with no one-time code in it.
 */
test('support opens an EN and a DE sent notice and sees the message as sent, re-rendered in a sandboxed frame', async ({
  browser,
  baseURL,
  seed,
  pageAs,
  sql,
}, testInfo) => {
  test.setTimeout(120_000);
  const run = randomUUID().slice(0, 8);
  const sink = await startSmtpSink();
  const context = await browser.newContext();
  const notices: { locale: 'en' | 'de'; subscription: string; jobId: string; noticeKey: string }[] = [];
  for (const locale of ['en', 'de'] as const) {
    const subscription = `sub_e2e_received_${locale}_${run}`;
    const posted = await context.request.post('/api/v1/reminders', {
      headers: { authorization: `Bearer ${seed.producer.token}` },
      data: {
        type: 'renewal_notice_t72',
        identity: { subscription_id: subscription, period_start: '2027-02-01' },
        recipient: { email: `${subscription}@customers.example.com`, timeZone: 'Europe/Berlin', locale },
        dueAt: hours(0),
        deadlineAt: hours(26),
        anchorAt: hours(50),
        payload: { customer_name: locale === 'de' ? 'Jana Müller' : 'Ana Silva', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
        source: 'e2e-received',
      },
    });
    expect(posted.status(), await posted.text()).toBe(201);
    const { id: jobId, noticeKey } = (await posted.json()) as { id: string; noticeKey: string };
    notices.push({ locale, subscription, jobId, noticeKey });
  }
  await context.close();
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
    for (const notice of notices) {
      await expect
        .poll(async () => (await sql<{ state: string }>('select state from notice_ledger where notice_key = $1', [notice.noticeKey]))[0]?.state, {
          timeout: 30_000,
        })
        .toBe('sent');
    }
    const versions = await sql<{ template_version_id: string | null }>(
      'select template_version_id from notice_ledger where notice_key = any($1) order by notice_key',
      [notices.map((notice) => notice.noticeKey)],
    );
    expect(versions.every((row) => row.template_version_id !== null)).toBe(true);

    const page = await pageAs('support');
    // The console's nonce CSP holds with the frame in the page: no violation in the console's own
    // document, and inside the frame only the email's remote stylesheet (MJML's web font) is refused.
    await page.addInitScript(() => {
      const seen: string[] = [];
      Object.assign(window, { cspViolations: seen });
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    const cspMessages: string[] = [];
    page.on('console', (message) => {
      if (/content security policy|refused to (execute|load|apply|frame)/i.test(message.text())) cspMessages.push(message.text());
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    for (const notice of notices) {
      const received = sink.messages().find((message) => message.to.includes(`${notice.subscription}@customers.example.com`));
      expect(received?.subject, `${notice.locale} mail in the sink`).toBeTruthy();
      await page.goto(`/lookup?q=${notice.subscription}`);
      const card = page.locator(`[data-testid="notice-card"][data-notice-key="${notice.noticeKey}"]`);
      const entry = card.locator('[data-testid="timeline-entry"][data-kind="message"]');
      await expect(entry).toContainText('What the customer received');
      await entry.getByTestId('received-open').click();
      await expect(entry.getByTestId('received-note')).toHaveAttribute('data-status', 'rendered');
      await expect(entry.getByTestId('received-note')).toContainText('Re-render from the stored payload and template version');
      await expect(entry.getByTestId('received-note')).toContainText('the evidence pack holds the exact bytes');
      // The subject the customer got, as the sink received it.
      await expect(entry.getByTestId('received-subject')).toHaveText(received?.subject ?? '');
      const frame = entry.getByTestId('received-html');
      await expect(frame).toHaveAttribute('sandbox', '');
      const body = page.frameLocator(`[data-notice-key="${notice.noticeKey}"] [data-testid="received-html"]`).locator('body');
      await expect(body).toContainText(notice.locale === 'de' ? 'Jana Müller' : 'Ana Silva');
      await expect(body).toContainText(notice.locale === 'de' ? '49,00' : '49.00');
      // A sandboxed frame has no script and an opaque origin: its document is not readable from the page.
      expect(await frame.evaluate((element: HTMLIFrameElement) => element.contentDocument === null)).toBe(true);
      await snap(page, testInfo, `lookup-received-${notice.locale}-html`);
      await snapElement(entry, testInfo, `lookup-received-${notice.locale}-frame`);
      await entry.getByTestId('received-tab-text').click();
      await expect(entry.getByTestId('received-text')).toContainText(notice.locale === 'de' ? 'Jana Müller' : 'Ana Silva');
      await expect(entry.getByTestId('received-text')).toContainText('••••••');
      await expect(entry.getByTestId('received-text')).not.toContainText(/confirmation code: [A-Z2-9]{10}/);
      await snap(page, testInfo, `lookup-received-${notice.locale}-text`);
    }
    // A notice sent before versions were recorded (the seeded scenario) says so, and shows no frame.
    const unversioned = seed.scenarios.support.duplicateCustomer;
    await page.goto(`/lookup?q=${unversioned.customerId}`);
    const older = page.locator(`[data-testid="notice-card"][data-notice-key="${unversioned.keys[0] ?? ''}"] [data-kind="message"]`);
    await expect(older).toContainText('unknown (sent before template versions were recorded');
    await older.getByTestId('received-open').click();
    await expect(older.getByTestId('received-note')).toHaveAttribute('data-status', 'unknown_version');
    await expect(older.getByTestId('received-note')).toContainText('nothing is re-rendered');
    await expect(older.getByTestId('received-html')).toHaveCount(0);
    await snapElement(older, testInfo, 'lookup-received-unknown');
    expect(await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? [])).toEqual([]);
    expect(errors).toEqual([]);
    for (const message of cspMessages) expect(message).toMatch(/^Loading the stylesheet 'https:\/\/[^']+' violates .*"style-src 'self' 'unsafe-inline'"/);
    const audit = await sql<{ target_id: string }>(`select target_id from audit_log where action = 'notice.rerender' and actor = $1 and target_id = any($2)`, [
      seed.users.support.email,
      notices.map((notice) => notice.noticeKey),
    ]);
    expect(new Set(audit.map((row) => row.target_id)).size).toBe(2);
  } finally {
    await worker.stop();
    await sink.stop();
  }
});
