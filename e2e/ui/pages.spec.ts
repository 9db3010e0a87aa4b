import { expect, snap, test } from '@/e2e/fixtures/test';

test('sign-in page refuses a wrong password and lets the right one in', async ({ page, seed }, testInfo) => {
  await page.goto('/quarantine');
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fquarantine/);
  await page.getByLabel('Email').fill(seed.users.manager.email);
  await page.getByLabel('Password').fill('wrong password');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByTestId('signin-error')).toContainText('do not match');
  await snap(page, testInfo, 'signin-error');
  await page.getByLabel('Password').fill(seed.users.manager.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page).toHaveURL(/\/quarantine$/);
  await expect(page.getByTestId('who-role')).toHaveText('Manager');
  await page.getByTestId('sign-out').click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto('/audit');
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Faudit/);
});

test('admin sees users and creates one; every page fits a phone', async ({ pageAs, seed }, testInfo) => {
  const page = await pageAs('admin');
  await page.goto('/admin');
  // Other specs add accounts of their own (sign-in and session specs); every seeded one is listed.
  for (const { email } of Object.values(seed.users)) await expect(page.locator(`[data-testid="user-row"][data-email="${email}"]`)).toBeVisible();
  await page.getByLabel('Reason for the change').fill('new support hire');
  await page.getByLabel('Email', { exact: true }).fill('new.hire@e2e.example.com');
  await page.getByLabel('Name', { exact: true }).fill('New Hire');
  await page.getByRole('button', { name: 'Create user' }).click();
  await expect(page.getByTestId('admin-message')).toContainText('Created new.hire@e2e.example.com');
  await expect(page.locator('[data-testid="user-row"][data-email="new.hire@e2e.example.com"]')).toBeVisible();
  await snap(page, testInfo, 'admin');

  await page.setViewportSize({ width: 390, height: 844 });
  for (const [path, name] of [
    ['/', 'phone-overview'],
    ['/quarantine', 'phone-quarantine'],
    [`/lookup?q=${seed.scenarios.support.duplicateCustomer.customerId}`, 'phone-lookup'],
  ] as const) {
    await page.goto(path);
    await expect(page.locator('main h1')).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${path} scrolls sideways on a phone`).toBeLessThanOrEqual(0);
    await snap(page, testInfo, name);
  }
});
