import { randomUUID } from 'node:crypto';
import { expect, snap, test } from '@/e2e/fixtures/test';

test('support opens a recipient, reads their own opt-out, opts them back in, cancels a pending notice and adds a suppression, each with a reason', async ({
  pageAs,
  sql,
  seed,
  baseURL,
}, testInfo) => {
  const email = `recipient-${randomUUID().slice(0, 8)}@example.com`;
  const hours = (n: number) => new Date(Date.now() + n * 3_600_000).toISOString();
  const created = await fetch(`${baseURL}/api/v1/reminders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${seed.producer.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'renewal_notice_t72',
      identity: { subscription_id: `sub_${randomUUID().slice(0, 8)}`, period_start: '2027-01-01' },
      recipient: { email, timeZone: 'Europe/Berlin' },
      dueAt: hours(2),
      deadlineAt: hours(26),
      anchorAt: hours(50),
      payload: { customer_name: 'Ana', plan_name: 'Pro', amount: '49.00', currency: 'EUR' },
      source: 'e2e-support',
    }),
  });
  expect(created.status).toBe(201);
  const { id: jobId } = (await created.json()) as { id: string };
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
  await expect(page.getByTestId('open-notice')).toHaveCount(1);
  await snap(page, testInfo, 'recipient-opted-out');

  await page.getByTestId('preference-opt-in').click();
  await expect(page.getByTestId('recipient-confirm-button')).toBeDisabled();
  await page.getByTestId('recipient-reason').fill('customer asked on the phone, ticket 4711');
  await page.getByTestId('recipient-confirm-button').click();
  await expect(page.getByTestId('recipient-done')).toContainText('done, and audited');
  await expect(page.getByTestId('preference-courtesy')).toHaveAttribute('data-state', 'opted_in');

  await expect(page.getByTestId('open-notice')).toHaveCount(1);
  await page.getByTestId('cancel-notice').click();
  await page.getByTestId('recipient-reason').fill('customer cancelled the subscription by phone');
  await page.getByTestId('recipient-confirm-button').click();
  await expect(page.getByTestId('recipient-done')).toContainText('cancelled');
  await expect(page.getByTestId('open-notice')).toHaveCount(0);
  expect(await sql<{ state: string }>('select state from reminder_jobs where id = $1', [jobId])).toEqual([{ state: 'cancelled' }]);

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
