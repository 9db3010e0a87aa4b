import { randomBytes } from 'node:crypto';
import { request as playwrightRequest } from '@playwright/test';
import { hashPassword } from '@/lib/auth/password';
import { totpCodeAt } from '@/lib/auth/totp';
import { FAST_SCRYPT } from '@/e2e/fixtures/console-data';
import { expect, signInState, snap, test } from '@/e2e/fixtures/test';

/** next-auth's credentials callback with an authentication code; the error code it answers, or null and a session. */
async function signInWithCode(baseURL: string, { email, password, code }: { email: string; password: string; code: string }) {
  const context = await playwrightRequest.newContext({ baseURL });
  try {
    const csrf = (await (await context.get('/api/auth/csrf')).json()) as { csrfToken: string };
    const response = await context.post('/api/auth/callback/credentials', {
      form: { csrfToken: csrf.csrfToken, email, password, code, callbackUrl: `${baseURL}/`, json: 'true' },
    });
    const { url } = (await response.json()) as { url: string };
    const signedIn = (await context.storageState()).cookies.some((cookie) => cookie.name.includes('next-auth.session-token'));
    return { error: new URL(url, baseURL).searchParams.get('error'), signedIn };
  } finally {
    await context.dispose();
  }
}

test('an admin sets up an authenticator; then sign-in needs its code (used once) or a recovery code (used once)', async ({
  browser,
  sql,
  baseURL,
}, testInfo) => {
  const base = baseURL ?? '';
  const email = `mfa-${randomBytes(3).toString('hex')}@e2e.example.com`;
  const password = 'mfa-admin-password-1';
  await sql(`insert into users (email, name, role, password_hash) values ($1, 'Two Step', 'admin', $2)`, [email, await hashPassword(password, FAST_SCRYPT)]);
  const context = await browser.newContext({ storageState: await signInState({ baseURL: base, email, password }) });
  const page = await context.newPage();
  await page.goto('/account');
  await page.getByLabel('Your password').fill(password);
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  const secret = ((await page.getByTestId('mfa-secret').textContent()) ?? '').replace(/\s/g, '');
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  await expect(page.getByTestId('mfa-uri')).toHaveAttribute('href', new RegExp(`^otpauth://totp/.*secret=${secret}`));
  await snap(page, testInfo, 'mfa-enrollment');
  const enrolledAt = new Date();
  await page.getByLabel('The code your app shows now').fill(totpCodeAt({ secret, now: enrolledAt }));
  await page.getByRole('button', { name: 'Confirm and turn on' }).click();
  await expect(page.getByTestId('mfa-message')).toContainText('Authenticator set up');
  const recoveryCodes = await page.getByTestId('mfa-recovery-codes').locator('li').allTextContents();
  expect(recoveryCodes).toHaveLength(10);
  await snap(page, testInfo, 'mfa-recovery-codes');
  await page.goto('/admin');
  await expect(page.locator(`[data-testid="user-row"][data-email="manager@e2e.example.com"]`).getByTestId('reset-user-mfa')).toBeVisible();
  await snap(page, testInfo, 'admin-users-mfa-reset');
  await context.close();
  const stored = JSON.stringify(await sql(`select * from user_mfa`)) + JSON.stringify(await sql(`select * from audit_log`));
  expect(stored).not.toContain(secret);
  expect(stored).not.toContain(recoveryCodes[0]);

  // The password alone, or with a wrong code, is refused with the same answer as a wrong password.
  expect(await signInWithCode(base, { email, password, code: '' })).toEqual({ error: 'CredentialsSignin', signedIn: false });
  expect(await signInWithCode(base, { email, password, code: '000000' })).toEqual({ error: 'CredentialsSignin', signedIn: false });
  expect(await signInWithCode(base, { email, password: 'not-the-password', code: '' })).toEqual({ error: 'CredentialsSignin', signedIn: false });

  // The sign-in form with the next step's code (the confirming one's step is used up): signed in.
  const next = totpCodeAt({ secret, now: new Date(enrolledAt.getTime() + 30_000) });
  const fresh = await browser.newContext();
  const signIn = await fresh.newPage();
  await signIn.goto('/signin');
  await signIn.getByLabel('Email').fill(email);
  await signIn.getByLabel('Password').fill(password);
  await signIn.getByLabel(/Authentication code/).fill(next);
  await signIn.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(signIn).toHaveURL(new RegExp(`^${base}/?$`));
  await fresh.close();
  // The same code again: a replay, refused.
  expect(await signInWithCode(base, { email, password, code: next })).toEqual({ error: 'CredentialsSignin', signedIn: false });

  const [recovery = ''] = recoveryCodes;
  expect(await signInWithCode(base, { email, password, code: recovery })).toEqual({ error: null, signedIn: true });
  expect(await signInWithCode(base, { email, password, code: recovery })).toEqual({ error: 'CredentialsSignin', signedIn: false });
});
