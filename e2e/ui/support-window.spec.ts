import { expect, snap, test } from '@/e2e/fixtures/test';

test('support reads in the lookup why a notice was window_missed and which rule set its window', async ({ pageAs, seed }, testInfo) => {
  const { window } = seed.scenarios;
  const page = await pageAs('support');
  await page.goto(`/lookup?q=${encodeURIComponent(window.subscriptionId)}`);
  const card = page.locator(`[data-testid="notice-card"][data-notice-key="${window.missedKey}"]`);
  await expect(card).toBeVisible();
  await expect(card.getByTestId('verdict')).toHaveText('Not sent: its send window closed before it could be sent (it is never sent late).');

  const sendWindow = card.getByTestId('send-window');
  await expect(sendWindow).toContainText('required');
  await expect(sendWindow).toContainText('window missed');
  await expect(sendWindow.getByTestId('window-status')).toContainText('Missed: the window closed at');
  // [earliest, latest] in the recipient's zone and in UTC.
  await expect(sendWindow.getByTestId('window-latest')).toContainText('(America/Los_Angeles)');
  await expect(sendWindow.getByTestId('window-latest')).toContainText('UTC');
  await expect(sendWindow.getByTestId('window-earliest')).toContainText('(America/Los_Angeles)');
  // Which rules, which rule set, which business event.
  for (const id of window.ruleIds) await expect(sendWindow.getByTestId('window-rules')).toContainText(id);
  await expect(sendWindow.getByTestId('window-rules')).toContainText(window.ruleSetVersion);
  await expect(sendWindow.getByTestId('window-set-by')).toContainText(`rule set ${window.ruleSetVersion} for region US-CA`);
  await expect(sendWindow.getByTestId('window-event')).toContainText(`subscription.renewal revision ${window.eventRevision}`);
  // Why: woken early (deferred, no attempt counted), then only after the window closed.
  await expect(sendWindow.locator('[data-kind="deferred_early"]')).toContainText('deferred to it, no attempt counted');
  await expect(sendWindow.locator('[data-kind="window_missed"]')).toContainText('window_missed: woken after the window closed');
  await expect(card.getByTestId('timeline-entry').filter({ hasText: 'Suppressed because its send window closed' })).toBeVisible();
  await snap(page, testInfo, 'lookup-window-missed');
});
