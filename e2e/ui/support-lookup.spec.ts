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

// SendGrid answers 202 before it looks at a message (issue 27): the timeline says what its own event said.
test('support reads in words that SendGrid dropped a message the ledger recorded as handed over', async ({ pageAs, seed, sql, request }, testInfo) => {
  const run = Math.random().toString(36).slice(2, 10);
  const answer = await request.post('/api/v1/reminders', {
    headers: { authorization: `Bearer ${seed.producer.token}` },
    data: {
      type: 'payment_recovery',
      identity: { account_id: `acct_${run}`, reconciliation_id: 'rec_sg_ui', exception_id: `exc_${run}` },
      recipient: { email: `dropped-${run}@sg-ui.e2e.example.com`, timeZone: 'Europe/Berlin' },
      dueAt: new Date(Date.now() + 7_200_000).toISOString(),
      deadlineAt: new Date(Date.now() + 26 * 3_600_000).toISOString(),
      payload: { customer_name: 'Ada', amount: '49.00', currency: 'EUR', reference: `SG-${run}` },
      source: 'lookup-e2e',
    },
  });
  expect(answer.status()).toBe(201);
  const job = (await answer.json()) as { id: string; noticeKey: string };
  await sql(`update reminder_jobs set state = 'sent' where id = $1`, [job.id]);
  await sql(
    `insert into notice_ledger (notice_key, notice_type, identity, revision, job_id, state, claimed_by, claimed_at, sent_at, provider_message_id, recipient_domain, provider_status)
     select notice_key, notice_type, identity, revision, id, 'sent', 'e2e-worker', now() - interval '1 minute', now(), $2, 'sg-ui.e2e.example.com', 'dropped'
     from reminder_jobs where id = $1`,
    [job.id, `sg-ui-${run}`],
  );
  const page = await pageAs('support');
  await page.goto(`/lookup?q=${job.noticeKey}`);
  const entry = page.getByTestId('timeline-entry').filter({ hasText: 'Ledger recorded the notice as sent' });
  await expect(entry).toContainText('dropped by the provider: it will not deliver this message');
  await expect(page.getByTestId('verdict')).toContainText('the provider dropped it: it was not delivered');
  await expect(page.getByTestId('verdict')).not.toContainText('Sent once');
  await expect(page.getByTestId('notice-card')).toContainText('Handed over inside its window (the provider then dropped it)');
  await expect(page.getByTestId('notice-card')).not.toContainText('Sent inside its window');
  await snap(page, testInfo, 'lookup-provider-dropped');
});
