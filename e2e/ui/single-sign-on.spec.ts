import type { Page } from '@playwright/test';
import { expect, snap, test } from '@/e2e/fixtures/test';

/**
 * Single sign-on through the local OpenID Connect issuer that scripts/e2e.ts starts
 * (e2e/fixtures/oidc-issuer.ts): the browser goes to the issuer, a test identity is picked on
 * its page, and next-auth redeems the code, checks the id_token and asks lib/auth/oidc-sign-in.ts.
 */

type SignInRow = { actor: string; action: string; target_type: string; target_id: string; reason: string; after: Record<string, unknown> };

const issuerUrl = process.env.OIDC_ISSUER ?? '';

/** From the console's sign-in page through the issuer, as the identity with that key. */
async function signInWithSso(page: Page, identity: string): Promise<void> {
  await page.getByTestId('signin-oidc').click();
  await expect(page).toHaveURL((url) => url.href.startsWith(`${issuerUrl}/authorize?`));
  await page.getByTestId(`identity-${identity}`).click();
}

/** Nobody is signed in: no session cookie, and a console page sends the browser to sign-in. */
async function expectSignedOut(page: Page): Promise<void> {
  expect((await page.context().cookies()).map((cookie) => cookie.name)).not.toContainEqual(expect.stringContaining('session-token'));
  await page.goto('/');
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2F$/);
}

test.describe('single sign-on', () => {
  let auditBefore = 0;
  test.beforeEach(async ({ sql }) => {
    expect(issuerUrl, 'OIDC_ISSUER is set by scripts/e2e.ts').toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const [row] = await sql<{ id: string }>('select coalesce(max(id), 0) as id from audit_log');
    auditBefore = Number(row?.id ?? 0);
  });
  const signInRows = (sql: <T extends SignInRow>(text: string, values?: unknown[]) => Promise<T[]>) =>
    sql<SignInRow>("select actor, action, target_type, target_id, reason, after from audit_log where id > $1 and action like 'sign_in.%' order by id", [
      auditBefore,
    ]);

  test('an existing console user signs in with single sign-on and lands where they were going, signed in with their role', async ({
    page,
    seed,
    sql,
  }, testInfo) => {
    const { email } = seed.users.oncall;
    const [user] = await sql<{ id: string }>('select id from users where email = $1', [email]);

    await page.goto('/quarantine');
    await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fquarantine/);
    await expect(page.getByTestId('signin-oidc')).toHaveText('Sign in with single sign-on');
    await snap(page, testInfo, 'signin-with-sso');

    await signInWithSso(page, 'oncall');
    await expect(page).toHaveURL(/\/quarantine$/);
    await expect(page.getByTestId('who')).toContainText(email);
    await expect(page.getByTestId('who-role')).toHaveText('On-call');
    await expect(page.locator('main h1')).toBeVisible();

    expect(await signInRows(sql)).toEqual([
      {
        actor: email,
        action: 'sign_in.success',
        target_type: 'user',
        target_id: user?.id,
        reason: 'signed in with single sign-on',
        after: expect.objectContaining({ method: 'oidc', role: 'oncall' }),
      },
    ]);
    const [signedIn] = await sql<{ last_login_at: Date | null }>('select last_login_at from users where email = $1', [email]);
    expect(signedIn?.last_login_at).toBeInstanceOf(Date);
  });

  test('an identity whose email has no console account is refused, and no account is created', async ({ page, sql }, testInfo) => {
    const email = 'stranger@e2e.example.com';
    const [{ count: usersBefore } = { count: '' }] = await sql<{ count: string }>('select count(*) from users');

    await page.goto('/signin');
    await signInWithSso(page, 'stranger');
    await expect(page).toHaveURL(/\/signin\?error=NoConsoleAccount$/);
    await expect(page.getByTestId('signin-error')).toContainText('does not match an active console account');
    await snap(page, testInfo, 'signin-sso-no-console-account');

    expect(await sql('select id from users where email = $1', [email])).toEqual([]);
    expect(await sql('select count(*) from users')).toEqual([{ count: usersBefore }]);
    expect(await signInRows(sql)).toEqual([
      {
        actor: email,
        action: 'sign_in.failure',
        target_type: 'email',
        target_id: email,
        reason: 'no console account for this single sign-on email',
        after: expect.objectContaining({ method: 'oidc' }),
      },
    ]);
    await expectSignedOut(page);
  });

  test('an existing user whose single sign-on email is not verified is refused the same way, whether the claim is false, "false" or missing', async ({
    page,
    seed,
    sql,
  }) => {
    const { email } = seed.users.oncall;
    const [user] = await sql<{ id: string }>('select id from users where email = $1', [email]);

    // No claim at all refuses too unless OIDC_EMAIL_VERIFIED=when-sent (not set here).
    for (const identity of ['oncall-unverified', 'oncall-unverified-string', 'oncall-no-claim']) {
      const [{ id: lastRow } = { id: '0' }] = await sql<{ id: string }>('select coalesce(max(id), 0) as id from audit_log');
      await page.goto('/signin');
      await signInWithSso(page, identity);
      await expect(page, identity).toHaveURL(/\/signin\?error=NoConsoleAccount$/);
      await expect(page.getByTestId('signin-error')).toContainText('has not verified it');
      expect(
        await sql("select actor, action, target_type, target_id, reason, after from audit_log where id > $1 and action like 'sign_in.%'", [lastRow]),
        identity,
      ).toEqual([
        {
          actor: email,
          action: 'sign_in.failure',
          target_type: 'user',
          target_id: user?.id,
          reason: 'single sign-on email not verified',
          after: expect.objectContaining({ method: 'oidc' }),
        },
      ]);
      await expectSignedOut(page);
    }
  });

  test('the account follows the linked issuer + subject: a renamed email still signs in, another subject with the email is refused', async ({
    page,
    seed,
    sql,
  }, testInfo) => {
    const { email } = seed.users.manager;
    const [user] = await sql<{ id: string }>('select id from users where email = $1', [email]);
    await page.goto('/signin');
    await signInWithSso(page, 'manager');
    await expect(page.getByTestId('who')).toContainText(email);
    expect(await sql('select issuer, subject from user_identities where user_id = $1', [user?.id])).toEqual([{ issuer: issuerUrl, subject: 'idp-manager' }]);

    await page.context().clearCookies();
    await page.goto('/signin');
    await signInWithSso(page, 'manager-renamed');
    await expect(page.getByTestId('who')).toContainText(email);
    await expect(page.getByTestId('who-role')).toHaveText('Manager');

    await page.context().clearCookies();
    const [{ id: lastRow } = { id: '0' }] = await sql<{ id: string }>('select coalesce(max(id), 0) as id from audit_log');
    await page.goto('/signin');
    await signInWithSso(page, 'manager-impostor');
    await expect(page).toHaveURL(/\/signin\?error=NoConsoleAccount$/);
    await snap(page, testInfo, 'signin-sso-other-subject');
    expect(await sql("select action, target_id, reason from audit_log where id > $1 and action like 'sign_in.%'", [lastRow])).toEqual([
      { action: 'sign_in.refused', target_id: user?.id, reason: 'another single sign-on identity is linked to this account' },
    ]);
    expect(await sql('select subject from user_identities where user_id = $1', [user?.id])).toEqual([{ subject: 'idp-manager' }]);
    await expectSignedOut(page);
  });

  test('an id_token signed with a key the issuer does not publish signs nobody in', async ({ page, sql }, testInfo) => {
    await page.goto('/signin');
    await signInWithSso(page, 'oncall-forged');
    await expect(page).toHaveURL(/\/signin\?.*error=OAuthCallback/);
    await expect(page.getByTestId('signin-error')).toContainText('could not verify the answer from your identity provider');
    await snap(page, testInfo, 'signin-sso-forged-token');

    // next-auth refuses the token before lib/auth/oidc-sign-in.ts is asked: no success, no row at all.
    expect(await signInRows(sql)).toEqual([]);
    await expectSignedOut(page);
  });
});
