import { request as playwrightRequest } from '@playwright/test';
import pg from 'pg';
import { snapshotTables } from '@/test/fuzz/table-snapshot';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * Cross-site request forgery against the console's mutations, through `next start` with a real
 * admin session cookie (a browser sends it along with a form or fetch from any site under
 * SameSite=Lax's rules for same-site origins). Each forged request is a 403 and every table is
 * byte-identical afterwards; the same request from the console's own origin creates the user.
 */

const reason = 'CSRF probe: creating an account from another site';

test('a text/plain form, a cross-site or same-site fetch and a POST without Origin cannot create an admin; the console’s own JSON request can', async ({
  apiAs,
  baseURL,
  sql,
}) => {
  const ownOrigin = new URL(baseURL ?? '').origin;
  const admin = await apiAs('admin');
  const state = await admin.storageState();
  // The admin's cookies without the fixture's Origin: what a browser sends with another site's request.
  const bare = await playwrightRequest.newContext({ baseURL, storageState: state });
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  try {
    const email = 'csrf-victim-admin@example.com';
    const body = JSON.stringify({ email, name: 'Mallory', role: 'admin', password: 'correct horse battery staple', reason });
    const before = await snapshotTables(pool);
    const forged: { label: string; headers: Record<string, string> }[] = [
      // The attack as reported: an HTML form (text/plain needs no CORS preflight) posted from another origin.
      { label: 'text/plain from evil.example', headers: { 'content-type': 'text/plain', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' } },
      {
        label: 'JSON, Sec-Fetch-Site cross-site',
        headers: { 'content-type': 'application/json', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
      },
      { label: 'JSON, cross-site with our Origin', headers: { 'content-type': 'application/json', origin: ownOrigin, 'sec-fetch-site': 'cross-site' } },
      // A sibling subdomain is the same site (SameSite=Lax sends the cookie) but another origin.
      {
        label: 'JSON from a sibling origin',
        headers: { 'content-type': 'application/json', origin: 'http://admin.127.0.0.1.nip.io', 'sec-fetch-site': 'same-site' },
      },
      { label: 'JSON, no Origin', headers: { 'content-type': 'application/json' } },
      { label: 'text/plain from our own origin', headers: { 'content-type': 'text/plain', origin: ownOrigin, 'sec-fetch-site': 'same-origin' } },
      { label: 'urlencoded from our own origin', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ownOrigin } },
    ];
    for (const { label, headers } of forged) {
      const response = await bare.post('/api/console/users', { headers, data: Buffer.from(body) });
      expect(response.status(), label).toBe(403);
      expect(await response.json(), label).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    }
    expect(await snapshotTables(pool)).toEqual(before);
    expect(await sql('select 1 from users where email = $1', [email])).toEqual([]);

    // The control: the console's own page sends JSON with its Origin and Sec-Fetch-Site: same-origin.
    const own = await bare.post('/api/console/users', {
      headers: { 'content-type': 'application/json', origin: ownOrigin, 'sec-fetch-site': 'same-origin' },
      data: Buffer.from(body),
    });
    expect(own.status()).toBe(201);
    expect(await sql('select role from users where email = $1', [email])).toEqual([{ role: 'admin' }]);
    // Gone again: the UI specs that follow count the seeded users (e2e/ui/pages.spec.ts).
    await sql('delete from users where email = $1', [email]);
    // Reads need no Origin: a GET changes nothing, and links and reloads send none.
    expect((await bare.get('/api/console/users')).status()).toBe(200);
  } finally {
    await bare.dispose();
    await pool.end();
  }
});
