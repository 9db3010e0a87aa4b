import { expect, test } from '@/e2e/fixtures/test';

test('anonymous callers get 401 from console routes and the pages redirect to sign-in', async ({ request }) => {
  for (const path of ['/api/console/overview/pending', '/api/console/quarantine', '/api/console/audit', '/api/console/users']) {
    const response = await request.get(path);
    expect(response.status(), path).toBe(401);
  }
  const page = await request.get('/quarantine', { maxRedirects: 0 });
  expect(page.status()).toBe(307);
  expect(page.headers().location).toContain('/signin?callbackUrl=%2Fquarantine');
});

test('support reads but cannot act; on-call can count before acting', async ({ apiAs, seed, sql }) => {
  const support = await apiAs('support');
  expect((await support.get('/api/console/quarantine')).status()).toBe(200);
  const key = seed.scenarios.refusal.stuckWithEvidence;
  const before = await sql('select * from notice_ledger where notice_key = $1', [key]);
  const refused = await support.post('/api/console/quarantine/resolve', { data: { action: 'confirm_sent', selection: { keys: [key] }, reason: 'nope' } });
  expect(refused.status()).toBe(403);
  expect(await sql('select * from notice_ledger where notice_key = $1', [key])).toEqual(before);
  expect((await support.get('/api/console/users')).status()).toBe(403);

  const oncall = await apiAs('oncall');
  const count = await oncall.post('/api/console/quarantine/count', { data: { selection: { filter: { recipientDomain: 'alpha.example.org' } } } });
  expect(count.status()).toBe(200);
  expect(await count.json()).toEqual({ ok: true, data: { count: 3 } });
  const bad = await oncall.post('/api/console/quarantine/resolve', { data: { action: 'explode', selection: { keys: [key] }, reason: 'x' } });
  expect(bad.status()).toBe(400);
});

test('metrics need the bearer token', async ({ request }) => {
  expect((await request.get('/api/metrics')).status()).toBe(401);
  const response = await request.get('/api/metrics', { headers: { authorization: 'Bearer e2e-metrics-token-0123456789' } });
  expect(response.status()).toBe(200);
  expect(await response.text()).toMatch(/^notice_ledger_quarantined_claims \d+$/m);
});
