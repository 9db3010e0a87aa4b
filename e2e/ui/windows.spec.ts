import { expect, snap, test } from '@/e2e/fixtures/test';

/** Send windows: the overview's banner and counts, the Windows page's three lists, resolving a gap (operator) and being refused (support), the notice types page. */

test.use({ viewport: { width: 1400, height: 900 } });

test('the overview shows the window banner and counts by type × region', async ({ pageAs }, testInfo) => {
  const page = await pageAs('oncall');
  await page.goto('/');
  await expect(page.getByTestId('alert-compliance_gap')).toContainText('could not be planned');
  await expect(page.getByTestId('alert-window_at_risk')).toContainText('send window closes within 24 h');
  await expect(page.getByTestId('alert-window_missed')).toContainText('missed');
  const card = page.getByTestId('windows-card');
  await expect(card).toBeVisible();
  await expect(page.getByTestId('windows-auto_renewal_notice-US-CA-at-risk')).toHaveText('1');
  await expect(page.getByTestId('windows-auto_renewal_notice-US-NY-missed-24h')).toHaveText('1');
  await expect(page.getByTestId('windows-pre_debit_notice-IN-at-risk')).toHaveText('1');
  await snap(page, testInfo, 'overview-windows');
});

test('the at-risk page lists the seeded at-risk notices, soonest first, with window, region, rules and state', async ({ pageAs, seed }, testInfo) => {
  const page = await pageAs('support');
  await page.goto('/windows');
  const rows = page.getByTestId('at-risk-row');
  const subjects = await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-subject')));
  expect(subjects.filter((subject) => seed.windows.atRiskSubjects.includes(subject ?? ''))).toEqual(seed.windows.atRiskSubjects);
  const first = page.locator(`[data-testid="at-risk-row"][data-subject="${seed.windows.atRiskSubjects[0] ?? ''}"]`);
  await expect(first).toContainText('US-CA');
  await expect(first).toContainText('US-CA/arl-annual@1');
  await expect(first).toContainText('pending');
  await expect(first).toContainText('required');
  await expect(page.locator(`[data-testid="at-risk-row"][data-subject="${seed.windows.atRiskSubjects[1] ?? ''}"]`)).toContainText('claimed');
  await snap(page, testInfo, 'windows-at-risk');

  await page.getByTestId('windows-tab-missed').click();
  await expect(page).toHaveURL(/tab=missed/);
  for (const subject of seed.windows.missedSubjects)
    await expect(page.locator(`[data-testid="missed-row"][data-subject="${subject}"]`)).toContainText('window_missed');
  await snap(page, testInfo, 'windows-missed');
});

test('an operator resolves a compliance gap with a reason: it leaves the open list and the audit log has it', async ({ pageAs, seed, sql }, testInfo) => {
  const gap = seed.windows.gaps[0];
  if (!gap) throw new Error('no gap seeded');
  const page = await pageAs('operator');
  await page.goto('/windows?tab=gaps');
  const row = page.locator(`[data-testid="gap-row"][data-subject="${gap.subject}"]`);
  await expect(row).toBeVisible();
  await expect(page.locator(`[data-testid="gap-row"][data-subject="${seed.windows.courtesyUnplannedSubject}"]`)).toHaveCount(0);
  await snap(page, testInfo, 'windows-gaps');
  await page.getByTestId(`gap-resolve-${gap.id}`).click();
  await expect(page.getByTestId('gap-resolve-submit')).toBeDisabled();
  await page.getByTestId('gap-reason').fill('sent by registered post; counsel confirmed');
  await snap(page, testInfo, 'windows-gap-resolve');
  await page.getByTestId('gap-resolve-submit').click();
  await expect(page.getByTestId('gap-result')).toContainText(`Gap ${gap.id}`);
  await expect(row).toHaveCount(0);
  const audit = await sql<{ actor: string; reason: string; before: { resolvedAt: null }; after: { resolvedBy: string } }>(
    `select actor, reason, before, after from audit_log where action = 'gap.resolve' and target_id = $1`,
    [String(gap.id)],
  );
  expect(audit).toEqual([
    expect.objectContaining({
      actor: 'operator@e2e.example.com',
      reason: 'sent by registered post; counsel confirmed',
      after: expect.objectContaining({ resolvedBy: 'operator@e2e.example.com' }),
    }),
  ]);
});

test('support cannot resolve a compliance gap, in the UI or by posting to the route', async ({ pageAs, apiAs, seed, sql }, testInfo) => {
  const gap = seed.windows.gaps[1];
  if (!gap) throw new Error('no second gap seeded');
  const page = await pageAs('support');
  await page.goto('/windows?tab=gaps');
  const row = page.locator(`[data-testid="gap-row"][data-subject="${gap.subject}"]`);
  await expect(row).toBeVisible();
  await expect(row.getByRole('button')).toHaveCount(0);
  await expect(page.getByTestId('gap-resolve-refused')).toBeVisible();
  await snap(page, testInfo, 'windows-gaps-support');

  const api = await apiAs('support');
  const answer = await api.post('/api/console/windows/gaps/resolve', { data: { id: gap.id, reason: 'trying anyway' } });
  expect(answer.status()).toBe(403);
  expect(await answer.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  expect(await sql('select resolved_at from unplanned_notices where id = $1', [gap.id])).toEqual([{ resolved_at: null }]);
  expect(await sql(`select 1 from audit_log where action = 'gap.resolve' and target_id = $1`, [String(gap.id)])).toEqual([]);
});

test('the notice types page lists the shipped types and the rules with their sources', async ({ pageAs }, testInfo) => {
  const page = await pageAs('admin');
  await page.goto('/admin');
  await page.getByRole('link', { name: /Notice types and rules/ }).click();
  await expect(page).toHaveURL(/\/admin\/notice-types$/);
  for (const name of [
    'renewal_notice_t72',
    'renewal_notice_t24',
    'payment_recovery',
    'auto_renewal_notice',
    'trial_conversion_notice',
    'price_change_notice',
    'pre_debit_notice',
    'billing_reminder',
  ]) {
    await expect(page.getByTestId(`notice-type-${name}`)).toBeVisible();
  }
  await expect(page.getByTestId('notice-type-renewal_notice_t72')).toContainText('−3 d');
  await expect(page.getByTestId('rule-US-CA/arl-annual')).toContainText('US-CA');
  await expect(page.getByTestId('rule-IN/rbi-emandate-pre-debit')).toContainText('issuer');
  await snap(page, testInfo, 'admin-notice-types');
});
