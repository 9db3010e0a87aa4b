import { expect, snap, test } from '@/e2e/fixtures/test';

/** The banner every console page shows while a transport's breaker is open (transport_status, written by the workers). */

test.use({ viewport: { width: 1400, height: 900 } });

test('a refused SMTP login and an unreachable Twilio show on every page, in words, until the workers say they are up', async ({ pageAs, sql }, testInfo) => {
  await sql(
    `insert into transport_status (transport, state, since, reason, error_class, code, worker_id, checked_at)
     values ('smtp', 'down', now() - interval '7 minutes', 'config_broken', 'smtp_535', 535, 'e2e-worker', now()),
            ('twilio', 'down', now() - interval '2 minutes', 'nothing_left', 'connect_failed', null, 'e2e-worker', now())`,
  );
  try {
    const page = await pageAs('support');
    for (const path of ['/', '/lookup']) {
      await page.goto(path);
      const smtp = page.locator('[data-testid="transport-down"] [data-transport="smtp"]');
      await expect(smtp).toContainText('SMTP login refused (535)');
      await expect(smtp).toContainText('check SMTP_URL credentials');
      await expect(page.locator('[data-testid="transport-down"] [data-transport="twilio"]')).toContainText('Twilio unreachable (connect failed)');
    }
    await page.goto('/');
    await snap(page, testInfo, 'transport-down-banner');
    await sql(`update transport_status set state = 'up', reason = null, error_class = null, code = null`);
    await page.reload();
    await expect(page.getByTestId('transport-down')).toHaveCount(0);
  } finally {
    await sql('delete from transport_status');
  }
});
