import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { correlationOf } from '@/lib/ledger/notice-key';
import { signRecipientToken } from '@/lib/recipient/link';
import { startSmtpSink } from '@/testing/smtp-sink';
import { recipientLinkIn, tokenOf } from '@/testing/recipient';
import { spawnWorker } from '@/testing/worker-process';
import { expect, snap, test } from '@/e2e/fixtures/test';

const HOUR = 3_600_000;
const shots = '/tmp/shots-recipient';

/**
 * As a customer: a billing service reports a renewal, the real worker sends the notice to a real
 * SMTP peer, and the customer opens the link from that email (no account, no console session),
 * cancels and sees the confirmation; support's lookup shows the request in words, and the
 * producer lists it. A tampered link and an expired one show their refusal pages and change
 * nothing (every product table byte-identical).
 */
test('a customer cancels from the link in the email; lookup and the producer see it; tampered and expired links change nothing', async ({
  browser,
  baseURL,
  seed,
  pageAs,
  sql,
}, testInfo) => {
  test.setTimeout(120_000);
  mkdirSync(shots, { recursive: true });
  const subscription = `sub_e2e_cancel_${randomUUID().slice(0, 8)}`;
  const email = `${subscription}@customers.example.com`;
  const auth = { authorization: `Bearer ${seed.producer.token}` };
  const sink = await startSmtpSink();
  const worker = spawnWorker({
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
    SMTP_URL: sink.url,
    MESSAGE_ID_DOMAIN: 'notices.example.com',
    PUBLIC_BASE_URL: baseURL ?? '',
    RATE_LIMIT_PER_DOMAIN: '1000',
  });
  try {
    // The charge is 30 h away: the 72-hour courtesy notice's window is open now.
    const anchorAt = new Date(Math.ceil((Date.now() + 30 * HOUR) / 60_000) * 60_000);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const posted = await context.request.post('/api/v1/events', {
      headers: auth,
      data: {
        type: 'subscription.renewal',
        identity: { subscription_id: subscription, period_start: anchorAt.toISOString().slice(0, 10) },
        anchorAt: anchorAt.toISOString(),
        recipient: { email, region: 'DE', timeZone: 'Europe/Berlin', locale: 'de-DE' },
        payload: { customer_name: 'Ana', plan_name: 'Coffee Box', amount: '19.00', currency: 'EUR' },
        source: 'e2e-recipient',
      },
    });
    expect(posted.status(), await posted.text()).toBe(201);
    const planned = ((await posted.json()) as { planned: { noticeType: string; noticeKey: string }[] }).planned;
    const notice = planned.find((entry) => entry.noticeType === 'renewal_notice_t72');
    if (!notice) throw new Error(`no 72-hour notice planned: ${JSON.stringify(planned)}`);

    await worker.ready;
    const [mail] = await sink.waitFor((messages) => messages.some((m) => m.correlation === correlationOf(notice.noticeKey)), 45_000);
    const received = sink.messages().find((m) => m.correlation === correlationOf(notice.noticeKey)) ?? mail;
    const link = recipientLinkIn(received?.raw ?? '');
    if (!link) throw new Error('the email carries no recipient-page link');
    // The compact link: /r/ and 34 characters after the host.
    expect(link.startsWith(`${baseURL ?? ''}/r/`)).toBe(true);
    expect(tokenOf(link)).toMatch(/^0p[A-Za-z0-9_-]{32}$/);

    // The customer opens it: no session, no sign-in page.
    const customer = await context.newPage();
    const opened = await customer.goto(link);
    expect(opened?.status()).toBe(200);
    await expect(customer).toHaveURL(link);
    await expect(customer.getByRole('heading', { level: 1 })).toHaveText('Your Coffee Box subscription');
    await expect(customer.getByTestId('notice-details')).toContainText('€19.00');
    await expect(customer.getByTestId('notice-details')).toContainText('Europe/Berlin');
    await snap(customer, testInfo, 'recipient-page');
    await customer.screenshot({ path: `${shots}/page-desktop.png`, fullPage: true });
    await customer.setViewportSize({ width: 390, height: 844 });
    await customer.screenshot({ path: `${shots}/page-390.png`, fullPage: true });

    const before = await productTables(sql);
    await customer.getByTestId('cancel-button').click();
    await expect(customer.getByTestId('flash')).toContainText('Your cancellation request has been recorded');
    await expect(customer.getByTestId('cancel-requested')).toBeVisible();
    await customer.screenshot({ path: `${shots}/confirmation-390.png`, fullPage: true });
    await snap(customer, testInfo, 'recipient-confirmation');
    expect(await productTables(sql)).not.toEqual(before);
    const requests = await sql<{ source: string; subject_id: string }>('select source, subject_id from cancellation_requests where notice_key = $1', [
      notice.noticeKey,
    ]);
    expect(requests).toEqual([{ source: 'recipient_page', subject_id: subscription }]);

    // A reload is a GET of the page, never a second request.
    await customer.reload();
    await expect(customer.getByTestId('cancel-requested')).toBeVisible();
    expect(await sql('select 1 from cancellation_requests where notice_key = $1', [notice.noticeKey])).toHaveLength(1);

    // A tampered link and an expired one (the old format, as mails sent before compact links carry): their page, their status, nothing changed.
    const token = tokenOf(link);
    const tampered = `${token.slice(0, -3)}${token.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    const expired = signRecipientToken({
      secret: process.env.NOTICE_KEY_SECRET ?? '',
      noticeKey: notice.noticeKey,
      purpose: 'page',
      expiresAt: new Date(Date.now() - 60_000),
    });
    const settled = await productTables(sql);
    await refused(customer, `/r/${tampered}`, 403, 'This link does not work');
    await customer.screenshot({ path: `${shots}/refusal-tampered-390.png`, fullPage: true });
    await refused(customer, `/r/${expired}`, 410, 'This link has expired');
    await snap(customer, testInfo, 'recipient-expired');
    for (const forged of [tampered, expired]) {
      const post = await context.request.post(`/r/${forged}/cancel`, { form: { code: 'X' }, maxRedirects: 0 });
      expect([403, 410]).toContain(post.status());
    }
    expect(await productTables(sql)).toEqual(settled);

    // Support sees the customer's request in the notice's timeline, in words.
    const support = await pageAs('support');
    await support.goto(`/lookup?q=${encodeURIComponent(email)}`);
    const entry = support.locator(`[data-testid="notice-card"][data-notice-key="${notice.noticeKey}"] [data-testid="timeline-entry"][data-kind="customer"]`);
    await expect(entry).toContainText(/Customer asked to cancel from the notice link, \d{1,2} [A-Z][a-z]{2} \d\d:\d\d UTC/);
    await snap(support, testInfo, 'lookup-cancellation');

    // And the producer lists it (once settled, LISTING_SETTLE_MS).
    await expect
      .poll(
        async () => {
          const listed = await context.request.get('/api/v1/cancellation-requests?limit=500', { headers: auth });
          const body = (await listed.json()) as { requests: { noticeKey: string; identity: Record<string, string> }[] };
          return body.requests.find((request) => request.noticeKey === notice.noticeKey)?.identity.subscription_id ?? null;
        },
        { timeout: 15_000 },
      )
      .toBe(subscription);
    await context.close();
  } finally {
    await worker.stop();
    await sink.stop();
  }
});

async function refused(page: Page, path: string, status: number, title: string): Promise<void> {
  const response = await page.goto(path);
  expect(response?.status()).toBe(status);
  await expect(page.getByTestId('refusal')).toContainText(title);
  await expect(page.getByTestId('refusal')).toContainText('Nothing was changed.');
}

/** Every product table as (count, md5), the rate-limit counters aside. */
async function productTables(sql: <T extends object>(text: string, values?: unknown[]) => Promise<T[]>): Promise<string> {
  const tables = await sql<{ name: string }>(
    "select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not in ('rate_limit_domains', 'pending_due_snapshot') order by 1",
  );
  const parts = tables.map(
    ({ name }) =>
      `select '${name}' as name, count(*)::text || ':' || coalesce(md5(string_agg(t::text, ',' order by t::text)), '-') as sum from public."${name}" t`,
  );
  const rows = await sql<{ name: string; sum: string }>(parts.join(' union all '));
  return rows.map((row) => `${row.name}=${row.sum}`).join('\n');
}
