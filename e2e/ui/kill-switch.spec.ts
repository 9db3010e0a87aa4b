import { expect, snap, test } from '@/e2e/fixtures/test';

/** The kill switch in the browser: an operator pauses a notice type with a reason, every page shows the banner, then resumes. */

test.use({ viewport: { width: 1400, height: 900 } });

test('an operator pauses a notice type, every page shows it, support cannot pause, and resuming clears the banner', async ({ pageAs, sql }, testInfo) => {
  try {
    const page = await pageAs('operator');
    await page.goto('/controls');
    await expect(page.getByTestId('controls-none')).toBeVisible();
    await page.getByTestId('controls-pause-target').selectOption('notice_type:renewal_notice_t72');
    await page.getByTestId('controls-pause-reason').fill('incident 42: wrong amounts');
    await page.getByTestId('controls-pause-submit').click();
    const row = page.locator('[data-testid="controls-pause-row"][data-control="pause:notice_type:renewal_notice_t72"]');
    await expect(row).toContainText('incident 42: wrong amounts');
    await snap(page, testInfo, 'kill-switch-controls-page');
    for (const path of ['/', '/lookup']) {
      await page.goto(path);
      await expect(page.locator('[data-testid="sending-paused"] [data-control="pause:notice_type:renewal_notice_t72"]')).toContainText(
        'Sending paused: notice type renewal_notice_t72',
      );
    }
    await snap(page, testInfo, 'kill-switch-banner');
    const audit = await sql<{ action: string; reason: string }>(
      `select action, reason from audit_log where target_id = 'pause:notice_type:renewal_notice_t72'`,
    );
    expect(audit).toEqual([{ action: 'sending.pause', reason: 'incident 42: wrong amounts' }]);

    const support = await pageAs('support');
    await support.goto('/controls');
    await expect(support.getByTestId('controls-pause-row')).toHaveCount(1);
    await expect(support.getByTestId('controls-pause-submit')).toHaveCount(0);

    await page.goto('/controls');
    await page.getByTestId('controls-resume-notice_type:renewal_notice_t72-reason').fill('incident 42 fixed');
    await page.getByTestId('controls-resume-notice_type:renewal_notice_t72-submit').click();
    await expect(page.getByTestId('controls-none')).toBeVisible();
    await page.goto('/');
    await expect(page.getByTestId('sending-paused')).toHaveCount(0);
  } finally {
    await sql('delete from runtime_controls');
  }
});
