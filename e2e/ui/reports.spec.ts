import { expect, snap, test } from '@/e2e/fixtures/test';
import { parseCsv } from '@/lib/replay/csv';

test('a manager reads the duplicate-rate report, exports exactly what is on screen, and prints without the chrome', async ({ pageAs, apiAs }, testInfo) => {
  const page = await pageAs('manager');
  await page.goto('/');
  await page.getByTestId('nav-reports').click();
  await expect(page).toHaveURL(/\/reports/);
  await page.getByLabel('By').selectOption('day');
  await page.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(/granularity=day/);
  const screen = await page
    .locator('[data-testid^="report-"] table')
    .evaluateAll((tables) =>
      tables.flatMap((table) =>
        Array.from(table.querySelectorAll('tr')).map((tr) => Array.from(tr.querySelectorAll('th, td')).map((cell) => (cell.textContent ?? '').trim())),
      ),
    );
  expect(screen.length).toBeGreaterThan(2);
  // Every column is on screen: no table wider than its card at this window width.
  const overflowing = await page
    .locator('[data-testid^="report-"] .table-wrap')
    .evaluateAll((wraps) => wraps.filter((wrap) => wrap.scrollWidth > wrap.clientWidth + 1).map((wrap) => wrap.parentElement?.dataset.testid));
  expect(overflowing).toEqual([]);
  // The manager's chart of the rate over time, one point per period with claims.
  // The line itself is checked by its path, not its visibility: when every period has the same
  // rate (3 of 24 and 5 of 40 are both 12.5 %) it is flat, a box of zero height that Playwright
  // calls hidden, and it is still the right chart.
  const chart = page.getByTestId('report-rate-chart');
  await expect(chart.locator('.recharts-line-dot').first()).toBeVisible();
  const dots = await chart.locator('.recharts-line-dot').count();
  expect(dots).toBeGreaterThan(0);
  const line = (await chart.locator('.recharts-line-curve').getAttribute('d')) ?? '';
  // Drawn from the first point on to the next ones (a line, or monotone's curves: M x,y L|C …).
  expect(line).toMatch(dots > 1 ? /^M[\d.,-]+[LC]/ : /^M/);
  const href = (await page.getByTestId('report-csv').getAttribute('href')) ?? '';
  const api = await apiAs('manager');
  const csv = await (await api.get(href)).text();
  expect(
    parseCsv(csv)
      .map((record) => record.fields)
      .filter((row) => row.length > 1),
  ).toEqual(screen);
  await snap(page, testInfo, 'report-manager');

  await page.emulateMedia({ media: 'print' });
  await expect(page.locator('.shell-header')).toBeHidden();
  await expect(page.getByTestId('report-csv')).toBeHidden();
  await expect(page.getByTestId('report-duplicates-suppressed')).toBeVisible();
  await snap(page, testInfo, 'report-print');
});

test('the report is for managers: an operator is refused on the page and the API', async ({ pageAs, apiAs }) => {
  const page = await pageAs('operator');
  await page.goto('/reports');
  await expect(page.getByTestId('forbidden')).toBeVisible();
  await expect(page.getByTestId('nav-reports')).toHaveCount(0);
  const api = await apiAs('operator');
  expect((await api.get('/api/console/reports/csv')).status()).toBe(403);
});
