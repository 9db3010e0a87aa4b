import { randomUUID } from 'node:crypto';
import type { ChartPoint, ChartsOverview } from '@/lib/api/console/overview';
import { startSmtpSink } from '@/testing/smtp-sink';
import { spawnWorker } from '@/testing/worker-process';
import { expect, snap, test } from '@/e2e/fixtures/test';

const HOUR = 3_600_000;

/**
 * On-call watches the overview's charts over time under `next start`, with a real worker
 * process writing the samples (every second here) and the SMTP sink: reminders due in a few
 * seconds show in "Pending jobs by due time", drain as the worker sends them, and a claim left
 * stuck past QUARANTINE_AFTER shows in "Claims in quarantine". Nothing waits on a timer: the
 * spec polls the charts' own data until it moves.
 */
test('on-call sees the pending and quarantine charts move as the worker drains and a claim is quarantined', async ({
  browser,
  baseURL,
  seed,
  pageAs,
  sql,
}, testInfo) => {
  test.setTimeout(150_000);
  const run = randomUUID().slice(0, 8);
  const sink = await startSmtpSink();
  const oncall = await pageAs('oncall');
  const charts = async (): Promise<ChartsOverview> => {
    const response = await oncall.request.get('/api/console/overview/charts?range=1h');
    expect(response.status()).toBe(200);
    return ((await response.json()) as { data: ChartsOverview }).data;
  };
  const latest = (data: ChartsOverview): ChartPoint | undefined => data.points.findLast((point) => point.quarantined !== null);
  const pendingTotal = (point: ChartPoint | undefined) => Object.values(point?.pending ?? {}).reduce((sum, count) => sum + count, 0);

  const jobIds: string[] = [];
  const producer = await browser.newContext();
  for (let index = 0; index < 4; index += 1) {
    const subscription = `sub_e2e_charts_${run}_${index}`;
    const posted = await producer.request.post('/api/v1/reminders', {
      headers: { authorization: `Bearer ${seed.producer.token}` },
      data: {
        type: 'renewal_notice_t72',
        identity: { subscription_id: subscription, period_start: '2027-01-01' },
        recipient: { email: `${subscription}@customers.example.com`, timeZone: 'UTC' },
        dueAt: new Date(Date.now() + 20_000).toISOString(),
        deadlineAt: new Date(Date.now() + 26 * HOUR).toISOString(),
        anchorAt: new Date(Date.now() + 50 * HOUR).toISOString(),
        payload: { customer_name: 'Ana Silva', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
        source: 'e2e-charts',
      },
    });
    expect(posted.status(), await posted.text()).toBe(201);
    jobIds.push(((await posted.json()) as { id: string }).id);
  }
  await producer.close();

  const worker = spawnWorker({
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    SMTP_URL: sink.url,
    MESSAGE_ID_DOMAIN: 'notices.example.com',
    PUBLIC_BASE_URL: baseURL ?? '',
    RATE_LIMIT_PER_DOMAIN: '1000',
    QUARANTINE_AFTER: '15m',
    OVERVIEW_SAMPLE_EVERY: '1s',
  });
  const stuckKey = `e2e_charts_stuck_${run}`;
  try {
    await worker.ready;
    // A sample taken while the four are pending (due in < 1 h).
    const pendingNow = async () =>
      (await sql<{ n: number }>(`select count(*)::int as n from reminder_jobs where id = any($1::uuid[]) and state = 'pending'`, [jobIds]))[0]?.n;
    let before: ChartPoint | undefined;
    await expect
      .poll(
        async () => {
          const point = latest(await charts());
          if ((await pendingNow()) === 4) before = point;
          return (before?.pending?.lt_1h ?? 0) >= 4;
        },
        { timeout: 20_000, intervals: [250] },
      )
      .toBe(true);
    const quarantinedBefore = before?.quarantined ?? 0;
    const totalBefore = pendingTotal(before);

    await oncall.goto('/?range=1h');
    await expect(oncall.getByTestId('chart-pending').locator('svg[role="application"]')).toBeVisible();
    await expect(oncall.getByTestId('chart-quarantine').locator('svg[role="application"]')).toBeVisible();
    await snap(oncall, testInfo, 'overview-charts-before-drain');

    // A worker died holding a claim 20 minutes ago: past QUARANTINE_AFTER, it is quarantined.
    await sql(
      `insert into notice_ledger (notice_key, notice_type, identity, state, claim_token, claimed_by, claimed_at)
       values ($1, 'renewal_notice_t72', '{"subscription_id":"sub_stuck","period_start":"2027-01-01"}', 'claimed', gen_random_uuid(), 'worker-killed', now() - interval '20 minutes')`,
      [stuckKey],
    );

    // The worker sends the four when they fall due; the next samples show the backlog gone and the stuck claim.
    await expect.poll(pendingNow, { timeout: 60_000, intervals: [500] }).toBe(0);
    await expect
      .poll(
        async () => {
          const point = latest(await charts());
          return { drained: pendingTotal(point) <= totalBefore - 4, quarantined: point?.quarantined };
        },
        { timeout: 20_000, intervals: [250] },
      )
      .toEqual({ drained: true, quarantined: quarantinedBefore + 1 });
    expect(sink.messages().filter((message) => message.to.some((to) => to.includes(`sub_e2e_charts_${run}`)))).toHaveLength(4);

    await oncall.reload();
    const pendingCard = oncall.getByTestId('chart-pending');
    await expect(pendingCard.locator('svg[role="application"]')).toBeVisible();
    await expect(oncall.getByTestId('chart-quarantine').locator('svg[role="application"]')).toBeVisible();
    // This worker's sink posts no events, but the relay's event source (the generic webhook) is
    // the whole deployment's: webhooks.spec.ts posts a signed generic "delivered" before this
    // file runs. The table must say what the stored events say — "no delivery evidence" without
    // any, never 0 delivered; a gap with some (lib/metrics/delivery-gap.test.ts holds both cases
    // on fixed data).
    const [evidence] = await sql<{ found: boolean }>(
      `select exists (select 1 from provider_events where provider = 'generic' and event_type = 'delivered' and notice_key is not null
         and received_at >= now() - interval '7 days') as found`,
    );
    const smtpRow = oncall.getByTestId('delivery-row-email-smtp');
    if (evidence?.found) await expect(smtpRow.getByTestId('delivery-gap')).toBeVisible();
    else await expect(smtpRow.getByTestId('no-delivery-evidence')).toHaveText('no delivery evidence');
    await snap(oncall, testInfo, 'overview-charts-after-drain');
    await oncall.getByTestId('chart-pending').screenshot({ path: 'test-results/screenshots/overview-charts-pending-after-drain.png' });

    // Each chart has its own range: 7 d on the pending chart leaves the quarantine chart at 1 h.
    await pendingCard.getByRole('button', { name: '7d' }).click();
    await expect(pendingCard).toHaveAttribute('data-range', '7d');
    await expect(pendingCard.locator('svg[role="application"]')).toBeVisible();
    await expect(oncall.getByTestId('chart-quarantine')).toHaveAttribute('data-range', '1h');

    // A phone: nothing wider than the screen, once the charts have taken the new width (recharts
    // resizes them from a ResizeObserver callback, after the viewport changed: read at once, the
    // 7-day chart was still its desktop width in one run, 207 px too wide).
    await oncall.setViewportSize({ width: 390, height: 844 });
    await expect(pendingCard.locator('svg[role="application"]')).toBeVisible();
    await expect.poll(() => oncall.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await snap(oncall, testInfo, 'overview-charts-phone');
    // The full page at phone width is too tall to read: the two charts and the delivery table on their own.
    for (const id of ['chart-pending', 'chart-quarantine', 'chart-handover']) {
      const file = `test-results/screenshots/overview-charts-phone-${id}.png`;
      await oncall.getByTestId(id).screenshot({ path: file });
      await testInfo.attach(id, { path: file, contentType: 'image/png' });
    }
  } finally {
    await sql('delete from notice_ledger where notice_key = $1', [stuckKey]);
    await worker.stop();
    await sink.stop();
  }
});
