import { expect, snap, test } from '@/e2e/fixtures/test';

test('support cannot resolve a stuck claim, through the UI or by posting to the route', async ({ pageAs, apiAs, seed, sql }, testInfo) => {
  const key = seed.scenarios.refusal.stuckUntouched;
  const read = async () =>
    sql(
      'select l.state, l.resolution, l.updated_at, j.state as job_state, j.updated_at as job_updated from notice_ledger l join reminder_jobs j using (notice_key) where notice_key = $1',
      [key],
    );
  const before = await read();
  expect(before).toHaveLength(1);

  const page = await pageAs('support');
  await page.goto('/quarantine');
  const row = page.locator(`[data-testid="quarantine-row"][data-notice-key="${key}"]`);
  await expect(row).toBeVisible();
  await expect(page.getByTestId('read-only-note')).toBeVisible();
  await expect(page.getByTestId('quarantine-actions')).toHaveCount(0);
  await expect(row.getByRole('button')).toHaveCount(0);
  await snap(page, testInfo, 'quarantine-support-read-only');

  const api = await apiAs('support');
  const resolve = await api.post('/api/console/quarantine/resolve', { data: { action: 'suppress', selection: { keys: [key] }, reason: 'trying anyway' } });
  expect(resolve.status()).toBe(403);
  expect(await resolve.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  const bulk = await api.post('/api/console/quarantine/resolve', { data: { action: 'release', selection: { filter: {} }, reason: 'trying anyway' } });
  expect(bulk.status()).toBe(403);
  expect(await read()).toEqual(before);
  expect(await sql('select 1 from audit_log where target_id = $1', [key])).toEqual([]);

  await page.goto('/admin');
  await expect(page.getByTestId('forbidden')).toBeVisible();
});
