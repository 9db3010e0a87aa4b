import { randomBytes } from 'node:crypto';
import { hashPassword } from '@/lib/auth/password';
import { FAST_SCRYPT } from '@/e2e/fixtures/console-data';
import { expect, signInState, snap, test } from '@/e2e/fixtures/test';

test('an admin sees a locked account, unlocks it and resets its password; the user changes their own password', async ({
  browser,
  pageAs,
  sql,
  baseURL,
}, testInfo) => {
  const email = `locked-${randomBytes(3).toString('hex')}@e2e.example.com`;
  const password = 'locked-user-password-1';
  await sql(
    `insert into users (email, name, role, password_hash, failed_logins, locked_until) values ($1, 'Locked Out', 'support', $2, 6, now() + interval '10 minutes')`,
    [email, await hashPassword(password, FAST_SCRYPT)],
  );
  const admin = await pageAs('admin');
  await admin.goto('/admin');
  const row = admin.locator(`[data-testid="user-row"][data-email="${email}"]`);
  await expect(row).toContainText('locked until');
  await snap(admin, testInfo, 'admin-locked-user');
  await admin.getByLabel('Reason for the change').fill('locked out after a keyboard swap');
  await row.getByTestId('unlock-user').click();
  await expect(admin.getByTestId('admin-message')).toContainText(`${email} is unlocked`);
  await expect(row).toContainText('active');
  admin.once('dialog', (dialog) => void dialog.accept());
  await row.getByTestId('reset-user-password').click();
  await expect(admin.getByTestId('reset-password')).toContainText(`New password for ${email}`);
  await snap(admin, testInfo, 'admin-password-reset');
  const generated = (await admin.getByTestId('reset-password').locator('code').textContent()) ?? '';
  expect(generated).toHaveLength(24);

  const storageState = await signInState({ baseURL: baseURL ?? '', email, password: generated });
  const context = await browser.newContext({ storageState });
  try {
    const page = await context.newPage();
    await page.goto('/');
    await page.getByTestId('nav-account').click();
    await expect(page).toHaveURL(/\/account$/);
    await page.getByLabel('Current password').fill(generated);
    await page.getByLabel(/^New password \(/).fill('password1234');
    await page.getByLabel('New password again').fill('password1234');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByTestId('password-message')).toContainText('leaked in public breaches');
    await snap(page, testInfo, 'account-breached-password');
    await page.getByLabel(/^New password \(/).fill('violet-harbour-tractor-91');
    await page.getByLabel('New password again').fill('violet-harbour-tractor-91');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByTestId('password-message')).toContainText('Password changed');
    await snap(page, testInfo, 'account-password-changed');
    // Still signed in: the form signed in again with the new password.
    await page.reload();
    await expect(page.getByTestId('password-change')).toBeVisible();
  } finally {
    await context.close();
  }
});
