import { existsSync } from 'node:fs';
import { defineConfig, devices } from '@playwright/test';

/**
 * Run through `npm run test:e2e` (scripts/e2e.ts): it prepares the database, the seed and the
 * production build, picks the port, and hands them over in E2E_PORT / DATABASE_URL / E2E_SEED_FILE.
 * Browsers cannot be downloaded here: Debian's Chromium is used.
 */
// The same setting and default as scripts/preflight.ts, which checks it before npm test runs anything else.
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (!existsSync(chromiumPath)) {
  console.error(
    `\n[e2e] Chromium not found at ${chromiumPath}. Install it with:\n\n    apt-get install -y chromium\n\n(or set CHROMIUM_PATH). Playwright's own browser download is not available here.\n`,
  );
}

const port = Number(process.env.E2E_PORT ?? 3107);
const baseURL = `http://127.0.0.1:${port}`;

const chromiumArgs = [
  '--no-sandbox',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  forbidOnly: !!process.env.CI,
  retries: 0,
  // Two shared cores run next start and Chromium: one worker keeps timings honest.
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  outputDir: 'test-results/playwright',
  reporter: [['list'], ['html', { open: 'never', outputFolder: 'playwright-report' }]],
  use: {
    baseURL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
  },
  projects: [
    { name: 'api', testMatch: 'api/**/*.spec.ts' },
    {
      name: 'ui',
      testMatch: 'ui/**/*.spec.ts',
      use: { ...devices['Desktop Chrome'], viewport: { width: 1366, height: 900 }, launchOptions: { executablePath: chromiumPath, args: chromiumArgs } },
    },
  ],
  webServer: {
    command: `npx next start --port ${port} --hostname 127.0.0.1`,
    url: `${baseURL}/signin`,
    // Never test against whatever happens to listen on the port: always our fresh build.
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...(process.env as Record<string, string>), NEXTAUTH_URL: baseURL, PORT: String(port) },
  },
});
