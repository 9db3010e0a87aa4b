import { expect, snap, test } from '@/e2e/fixtures/test';

/** The admin page's API tokens form takes scopes and an optional expiry day, and the list shows both. */
test('an admin creates a scoped token with an expiry on the console; without a scope the form says what to do', async ({ pageAs, sql }, testInfo) => {
  const page = await pageAs('admin');
  await page.goto('/admin');
  const tokens = page.getByTestId('tokens-admin');
  await tokens.getByLabel('Name (which producer)').fill('ui billing');
  await tokens.getByLabel('Reason (audited)').fill('billing posts its renewals');
  await tokens.getByRole('button', { name: 'Create token' }).click();
  await expect(tokens.locator('.banner.critical')).toContainText('choose at least one scope');
  expect(await sql("select id from api_tokens where name = 'ui billing'")).toEqual([]);

  await tokens.getByLabel('events:write').check();
  await tokens.getByLabel('notices:read').check();
  await tokens.getByLabel('Expires (optional, UTC day)').fill('2031-06-30');
  await tokens.getByRole('button', { name: 'Create token' }).click();
  await expect(tokens.getByTestId('new-token')).toContainText('nlk_');
  const row = tokens.getByTestId('token-row').filter({ hasText: 'ui billing' });
  await expect(row).toContainText('events:write, notices:read');
  await expect(row).toContainText('2031-06-30');
  await snap(page, testInfo, 'admin-tokens-scoped');
  expect(await sql("select scopes, expires_at from api_tokens where name = 'ui billing'")).toEqual([
    { scopes: ['events:write', 'notices:read'], expires_at: new Date('2031-06-30T23:59:59.000Z') },
  ]);
});
