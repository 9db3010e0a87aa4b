import { expect, snap, test } from '@/e2e/fixtures/test';

test('support finds why a customer got two emails and reads the suppressed duplicate', async ({ pageAs, seed }, testInfo) => {
  const { duplicateCustomer } = seed.scenarios.support;
  const page = await pageAs('support');
  await page.goto('/lookup');
  await expect(page.getByTestId('who-role')).toHaveText('Support');
  await page.getByLabel(/Email, customer/).fill(duplicateCustomer.customerId);
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page).toHaveURL(/\/lookup\?q=cus_twice-s/);

  const cards = page.getByTestId('notice-card');
  await expect(cards).toHaveCount(2);
  await expect(page.getByTestId('lookup-summary')).toContainText('2 notices');
  for (const key of duplicateCustomer.keys) await expect(page.locator(`[data-testid="notice-card"][data-notice-key="${key}"]`)).toBeVisible();

  const corrected = page.locator(`[data-testid="notice-card"][data-notice-key="${duplicateCustomer.keys[1]}"]`);
  await expect(corrected.getByTestId('verdict')).toContainText('1 duplicate attempt was suppressed, so it went out once');
  await expect(corrected.getByTestId('timeline-entry').filter({ hasText: 'Duplicate suppressed' })).toContainText('another attempt already held the claim');
  await expect(corrected.getByTestId('timeline-entry').filter({ hasText: 'Deferred because of' }).first()).toContainText("recipient's quiet hours");
  await corrected.getByTestId('key-derivation').locator('summary').click();
  await expect(corrected.getByTestId('key-derivation')).toContainText('recomputed key matches');
  await expect(corrected.getByTestId('key-derivation')).toContainText('revision');
  await expect(page.locator('body')).not.toContainText('CODE-NEVER-SHOWN');
  await snap(page, testInfo, 'lookup-support');

  await page.goto(`/lookup?q=${encodeURIComponent(`<${(duplicateCustomer.keys[0] ?? '').slice(0, 32)}@notices.example.com>`)}`);
  await expect(page.getByTestId('notice-card')).toHaveCount(1);
  await page.goto('/lookup?q=nobody-here%40example.com');
  await expect(page.getByTestId('lookup-empty')).toContainText('Nothing matches');
  await snap(page, testInfo, 'lookup-empty');
});
