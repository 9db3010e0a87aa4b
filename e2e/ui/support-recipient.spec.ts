import { randomUUID } from 'node:crypto';
import { expect, snap, test } from '@/e2e/fixtures/test';

test('support opens a recipient, reads their own opt-out, opts them back in with a reason and adds a suppression', async ({ pageAs, sql }, testInfo) => {
  const email = `recipient-${randomUUID().slice(0, 8)}@example.com`;
  await sql(`insert into recipient_preferences (recipient, category, channel, state, source) values ($1, 'courtesy', 'email', 'opted_out', 'one_click')`, [
    email,
  ]);
  await sql(
    `insert into recipient_preference_changes (recipient, category, channel, from_state, to_state, source, actor, reason, changed_at)
     values ($1, 'courtesy', 'email', null, 'opted_out', 'one_click', '5a5000000000000000000000000000e1', 'one-click unsubscribe (RFC 8058)', now() - interval '2 days')`,
    [email],
  );
  const page = await pageAs('support');
  await page.goto(`/recipients?email=${encodeURIComponent(email)}`);
  await expect(page.getByTestId('recipient-view')).toBeVisible();
  await expect(page.getByTestId('preference-courtesy')).toHaveAttribute('data-state', 'opted_out');
  await expect(page.getByTestId('history-row').first()).toContainText('Opted out of courtesy reminders in one click from an email');
  await snap(page, testInfo, 'recipient-opted-out');

  await page.getByTestId('preference-opt-in').click();
  await expect(page.getByTestId('recipient-confirm-button')).toBeDisabled();
  await page.getByTestId('recipient-reason').fill('customer asked on the phone, ticket 4711');
  await page.getByTestId('recipient-confirm-button').click();
  await expect(page.getByTestId('recipient-done')).toContainText('done, and audited');
  await expect(page.getByTestId('preference-courtesy')).toHaveAttribute('data-state', 'opted_in');

  await page.getByTestId('suppression-add').click();
  await page.getByTestId('recipient-reason').fill('address belongs to someone else');
  await snap(page, testInfo, 'recipient-confirm-suppression');
  await page.getByTestId('recipient-confirm-button').click();
  await expect(page.getByTestId('recipient-suppression')).toContainText('manual');
  await expect(page.getByTestId('recipient-audit')).toContainText('recipient.suppression_add');
  await snap(page, testInfo, 'recipient-after-changes');
  const audit = await sql<{ action: string }>(`select action from audit_log where target_type = 'recipient' and target_id = $1 order by id`, [email]);
  expect(audit.map((row) => row.action)).toEqual(['recipient.preference_set', 'recipient.suppression_add']);
});
