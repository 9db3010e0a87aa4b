import { expect, snap, test } from '@/e2e/fixtures/test';

/**
 * The console under its nonce CSP in a real browser (proxy.ts, lib/http/security-headers.ts): the
 * pages hydrate and act, the Templates page's sandboxed srcdoc frames render their inline-styled
 * email HTML, and the browser reports no violation in the console's own documents (neither a
 * securitypolicyviolation event nor an error); inside the preview frames only the email's remote
 * stylesheets are refused.
 */

type Violation = { directive: string; blocked: string; source: string };

test('an operator’s pages hydrate, act and render the email HTML with no CSP violation', async ({ pageAs }, testInfo) => {
  const page = await pageAs('operator');
  await page.addInitScript(() => {
    const seen: Violation[] = [];
    Object.assign(window, { cspViolations: seen });
    document.addEventListener('securitypolicyviolation', (event) => {
      seen.push({ directive: event.violatedDirective, blocked: event.blockedURI, source: event.sourceFile });
    });
  });
  const messages: string[] = [];
  page.on('console', (message) => {
    if (/content security policy|refused to (execute|load|apply|frame)/i.test(message.text())) messages.push(message.text());
  });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const violations = async () => page.evaluate(() => (window as unknown as { cspViolations?: Violation[] }).cspViolations ?? []);

  await page.goto('/');
  await expect(page.getByRole('navigation')).toBeVisible();
  expect(await violations()).toEqual([]);

  await page.goto('/admin/templates');
  const german = page.getByTestId('rendering-renewal_notice_t72-email-de');
  await expect(german.getByTestId('rendered-html')).toHaveAttribute('sandbox', '');
  // The frame's document is the email: its inline styles apply (a CSP without them would leave it unstyled, not empty).
  const email = page.frameLocator('[data-testid="rendering-renewal_notice_t72-email-de"] [data-testid="rendered-html"]');
  await expect(email.locator('body')).toContainText('49,00');
  // React handled the click: the typed client posted JSON with the page's Origin and showed the server's refusal.
  await page.getByTestId('send-test-renewal_notice_t72-en-to').fill('not an address');
  await page.getByTestId('send-test-renewal_notice_t72-en-submit').click();
  await expect(page.getByTestId('send-test-renewal_notice_t72-en-result')).toContainText('That is not an email address');
  await snap(page, testInfo, 'csp-templates');

  await page.goto('/lookup');
  await page.locator('#q').fill('nobody@example.com');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/q=nobody/);

  expect(await violations()).toEqual([]);
  expect(errors).toEqual([]);
  // The one thing refused: remote stylesheets the email HTML links (MJML's web font). A preview
  // loads nothing from a third party, as a mail client that blocks remote content shows it.
  const ownHost = new URL(page.url()).host;
  for (const message of messages) {
    expect(message).toMatch(/^Loading the stylesheet 'https:\/\/[^']+' violates .*"style-src 'self' 'unsafe-inline'"/);
    expect(message).not.toContain(ownHost);
  }
});
