import { expect, snap, test } from '@/e2e/fixtures/test';

/** The Templates page: every template × channel × locale rendered with its sample, HTML in a sandboxed frame; send a test (operator+). */

test.use({ viewport: { width: 1400, height: 900 } });

test('an operator sees every template rendered with its sample and is told a bad test address is not one', async ({ pageAs }, testInfo) => {
  const page = await pageAs('operator');
  await page.goto('/admin/notice-types');
  await page.getByRole('link', { name: /Templates/ }).click();
  await expect(page).toHaveURL(/\/admin\/templates$/);
  for (const id of [
    'renewal_notice_t72',
    'renewal_notice_t24',
    'payment_recovery',
    'auto_renewal_notice',
    'trial_conversion_notice',
    'price_change_notice',
    'pre_debit_notice',
    'billing_reminder',
  ]) {
    await expect(page.getByTestId(`template-${id}`)).toBeVisible();
    await expect(page.getByTestId(`rendering-${id}-email-en`)).toBeVisible();
  }
  const german = page.getByTestId('rendering-renewal_notice_t72-email-de');
  await expect(german.getByTestId('rendered-subject')).toContainText('Ihr Abo Pro annual verlängert sich am');
  await expect(german.getByTestId('rendered-text')).toContainText('49,00');
  const frame = german.getByTestId('rendered-html');
  await expect(frame).toHaveAttribute('sandbox', '');
  await expect(page.getByTestId('rendering-payment_recovery-sms-de').getByTestId('rendered-sms')).toContainText('RC-2026-0042');
  await expect(page.getByTestId('template-payment_recovery-variables')).toContainText('decimal');
  await expect(page.getByTestId('rendering-auto_renewal_notice-email-en').getByTestId('rendered-text')).toContainText('legally required');

  await page.getByTestId('send-test-renewal_notice_t72-en-to').fill('not an address');
  await page.getByTestId('send-test-renewal_notice_t72-en-submit').click();
  await expect(page.getByTestId('send-test-renewal_notice_t72-en-result')).toContainText('That is not an email address');
  await snap(page, testInfo, 'admin-templates');
  // One rendering up close: the HTML in its frame beside the text part.
  await german.scrollIntoViewIfNeeded();
  await german.screenshot({ path: testInfo.outputPath('rendering-de.png') });
  await testInfo.attach('rendering-de', { path: testInfo.outputPath('rendering-de.png'), contentType: 'image/png' });
  await page.setViewportSize({ width: 390, height: 900 });
  await german.scrollIntoViewIfNeeded();
  await german.screenshot({ path: testInfo.outputPath('rendering-de-mobile.png') });
  await testInfo.attach('rendering-de-mobile', { path: testInfo.outputPath('rendering-de-mobile.png'), contentType: 'image/png' });
});

test('support may not read the templates', async ({ pageAs }) => {
  const page = await pageAs('support');
  await page.goto('/admin/templates');
  await expect(page.getByTestId('forbidden')).toBeVisible();
  await expect(page.getByTestId('template-renewal_notice_t72')).toHaveCount(0);
});
