import { expect, snap, test } from '@/e2e/fixtures/test';

test('on-call confirms a stuck claim from provider evidence, releases another, and audit shows both', async ({ pageAs, seed, sql }, testInfo) => {
  const { stuckWithEvidence, stuckWithoutEvidence } = seed.scenarios.oncall;
  const page = await pageAs('oncall');

  // The seed's stuck claims plus whatever earlier specs left claimed past QUARANTINE_AFTER (15m in
  // scripts/e2e.ts): the tile must show the ledger's own count, whichever specs ran before.
  const [{ stuck }] = (await sql<{ stuck: number }>(
    `select count(*)::int as stuck from notice_ledger where state = 'claimed' and claimed_at < now() - interval '15 minutes'`,
  )) as [{ stuck: number }];
  expect(stuck).toBeGreaterThanOrEqual(3);
  await page.goto('/');
  await expect(page.getByTestId('alert-quarantine')).toContainText('stuck in quarantine');
  await expect(page.getByTestId('tile-quarantine')).toHaveText(new RegExp(`(^|\\D)${String(stuck)}(\\D|$)`));
  // The seed's overdue renewal (due 2 h ago, 40 min of window left) is still pending: specs that
  // run a worker process (its sweeper sends every due job) sort after this file.
  await expect(page.getByTestId('alert-deadline')).toContainText('within an hour of the deadline');
  await expect(page.getByTestId('pending-renewal_notice_t24-overdue')).toHaveText('1');
  await expect(page.getByTestId('chart-latency')).toBeVisible();
  await snap(page, testInfo, 'overview-oncall');

  await page.goto('/quarantine');
  const confirmRow = page.locator(`[data-testid="quarantine-row"][data-notice-key="${stuckWithEvidence}"]`);
  await expect(confirmRow.getByTestId('evidence')).toContainText('accepted');
  await expect(confirmRow.getByTestId('evidence')).toContainText('ses-alpha-o');
  // The provider reconciler asked Postmark for 30 min and heard nothing: its reason is the suggestion's why; the claim is still there to decide.
  const askedRow = page.locator(`[data-testid="quarantine-row"][data-notice-key="${seed.scenarios.oncall.stuckUntouched}"]`);
  await expect(askedRow.getByTestId('provider-lookup')).toContainText('no record');
  await expect(askedRow.getByTestId('provider-lookup')).toContainText('asked Postmark 29×');
  await expect(askedRow).toContainText('Postmark has no record of this message after 30 min: release to resend or mark sent.');
  await snap(page, testInfo, 'quarantine-oncall');

  await confirmRow.getByTestId('row-confirm_sent').click();
  const panel = page.getByTestId('confirm-panel');
  await expect(panel.getByTestId('confirm-count')).toContainText('1 stuck claim will change');
  await expect(panel.getByTestId('confirm-submit')).toBeDisabled();
  await panel.getByTestId('confirm-reason').fill('SES accepted it at claim time; worker died before commit');
  await snap(page, testInfo, 'quarantine-confirm-panel');
  await panel.getByTestId('confirm-submit').click();
  await expect(page.getByTestId('resolve-result')).toContainText('Confirmed as sent: 1 claim');
  await expect(confirmRow).toHaveCount(0);

  const releaseRow = page.locator(`[data-testid="quarantine-row"][data-notice-key="${stuckWithoutEvidence}"]`);
  await releaseRow.getByTestId('row-release').click();
  await expect(page.getByTestId('confirm-count')).toContainText('1 stuck claim will change');
  await page.getByTestId('confirm-reason').fill('No provider evidence; resend with the same code');
  await page.getByTestId('confirm-submit').click();
  await expect(page.getByTestId('resolve-result')).toContainText('Released for resend: 1 claim');
  await expect(releaseRow).toHaveCount(0);

  const [confirmed] = await sql<{ state: string; provider_message_id: string }>('select state, provider_message_id from notice_ledger where notice_key = $1', [
    stuckWithEvidence,
  ]);
  expect(confirmed).toEqual({ state: 'sent', provider_message_id: 'ses-alpha-o' });
  const [released] = await sql<{ state: string; one_time_code: string; job_state: string }>(
    'select l.state, l.one_time_code, j.state as job_state from notice_ledger l join reminder_jobs j using (notice_key) where notice_key = $1',
    [stuckWithoutEvidence],
  );
  expect(released).toEqual({ state: 'released', one_time_code: 'OTC-bravo', job_state: 'pending' });

  await page.goto(`/audit?actor=${encodeURIComponent(seed.users.oncall.email)}&action=quarantine.`);
  const rows = page.getByTestId('audit-row');
  await expect(rows).toHaveCount(2);
  await expect(page.locator(`[data-testid="audit-row"][data-target="${stuckWithEvidence}"]`)).toContainText('quarantine.confirm_sent');
  await expect(page.locator(`[data-testid="audit-row"][data-target="${stuckWithoutEvidence}"]`)).toContainText('quarantine.release');
  await expect(page.locator(`[data-testid="audit-row"][data-target="${stuckWithoutEvidence}"]`)).toContainText(
    'No provider evidence; resend with the same code',
  );
  await snap(page, testInfo, 'audit-oncall');
});
