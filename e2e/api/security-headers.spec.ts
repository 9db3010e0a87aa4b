import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { APIResponse } from '@playwright/test';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * The headers every console response carries, through `next start` (proxy.ts for the pages,
 * next.config.mjs for the API; lib/http/security-headers.ts). The pages are listed from
 * app/(console)/ itself, so a new page is checked without being added here. HSTS needs an https
 * PUBLIC_BASE_URL, which this run (http on 127.0.0.1) has not: test/console-security-startup.test.ts
 * checks it with one.
 */

function consolePages(dir = path.join(process.cwd(), 'app', '(console)'), prefix = ''): string[] {
  const pages: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) pages.push(...consolePages(path.join(dir, entry.name), `${prefix}/${entry.name}`));
    else if (entry.name === 'page.tsx') pages.push(prefix || '/');
  }
  return pages.sort();
}

function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name = '', ...values]) => [name, values]),
  );
}

function expectPageHeaders(response: APIResponse, label: string): string {
  const headers = response.headers();
  const policy = directives(headers['content-security-policy'] ?? '');
  const scripts = policy.get('script-src') ?? [];
  const nonce = scripts.find((value) => value.startsWith("'nonce-"))?.slice(7, -1) ?? '';
  expect(nonce.length, `${label}: a script nonce`).toBeGreaterThanOrEqual(16);
  expect(scripts, label).not.toContain("'unsafe-inline'");
  expect(scripts, label).not.toContain("'unsafe-eval'");
  expect(policy.get('frame-ancestors'), label).toEqual(["'none'"]);
  expect(policy.get('object-src'), label).toEqual(["'none'"]);
  expect(headers['x-content-type-options'], label).toBe('nosniff');
  expect(headers['referrer-policy'], label).toBe('same-origin');
  expect(headers['strict-transport-security'], `${label}: no HSTS over http`).toBeUndefined();
  return nonce;
}

test('every console page: a nonce CSP on every script, frame-ancestors none, nosniff, same-origin referrer; a fresh nonce per response', async ({
  apiAs,
  request,
}) => {
  const pages = consolePages();
  expect(pages).toEqual(expect.arrayContaining(['/', '/lookup', '/quarantine', '/replays', '/reports', '/admin/templates']));
  const admin = await apiAs('admin');
  const nonces = new Set<string>();
  for (const page of pages) {
    const response = await admin.get(page);
    expect(response.status(), page).toBe(200);
    const nonce = expectPageHeaders(response, page);
    nonces.add(nonce);
    const html = await response.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
    expect(scripts.length, `${page}: Next's scripts`).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag, page).toContain(`nonce="${nonce}"`);
  }
  expect(nonces.size).toBe(pages.length);

  // Signed out: the sign-in page, and the redirect a page answers without a session.
  const signIn = await request.get('/signin');
  expect(signIn.status()).toBe(200);
  expectPageHeaders(signIn, '/signin');
  const redirected = await request.get('/quarantine', { maxRedirects: 0 });
  expect(redirected.status()).toBe(307);
  expectPageHeaders(redirected, '/quarantine signed out');
});

test('the API: nosniff, nothing framed or loaded, same-origin referrer; the recipient page keeps no-referrer', async ({ apiAs, request }) => {
  const admin = await apiAs('admin');
  for (const response of [await admin.get('/api/console/users'), await request.get('/api/console/users'), await request.get('/api/health')]) {
    const headers = response.headers();
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(headers['referrer-policy']).toBe('same-origin');
  }
  // The token is in the URL: nothing may carry it away in a Referer.
  const recipient = await request.get('/r/not-a-token');
  expect(recipient.status()).toBe(400);
  expect(recipient.headers()['referrer-policy']).toBe('no-referrer');
  expect(recipient.headers()['x-content-type-options']).toBe('nosniff');
  expect(recipient.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
});

test('the sign-in page sends a signed-in visitor only to a path on this console', async ({ apiAs }) => {
  const admin = await apiAs('admin');
  const landing = async (callbackUrl: string) => {
    const response = await admin.get(`/signin?callbackUrl=${callbackUrl}`, { maxRedirects: 0 });
    expect([303, 307, 308], callbackUrl).toContain(response.status());
    return response.headers()['location'];
  };
  // As reported: /\evil.example, which browsers read as //evil.example.
  for (const offSite of [
    '/%5Cevil.example',
    '//evil.example',
    '/%5C%5Cevil.example',
    'https://evil.example/',
    '/.//evil.example',
    '/%09/evil.example',
    'javascript:alert(1)',
  ]) {
    expect(await landing(offSite), offSite).toBe('/');
  }
  expect(await landing(encodeURIComponent('/lookup?q=customer@example.com'))).toBe('/lookup?q=customer@example.com');
});
