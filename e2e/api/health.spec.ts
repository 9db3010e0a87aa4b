import { expect, test } from '@/e2e/fixtures/test';

/**
 * The probes a load balancer or Kubernetes calls, through `next start` and without a session or
 * a token: liveness answers while the console serves; readiness says ready and nothing else (no
 * migration counts, no database error text: its reasons are the console's log).
 */
test('GET /api/health and /api/ready answer an anonymous caller, ready saying only that it is', async ({ request }) => {
  const health = await request.get('/api/health');
  expect(health.status()).toBe(200);
  expect(await health.json()).toEqual({ status: 'ok' });

  const ready = await request.get('/api/ready');
  expect(ready.status()).toBe(200);
  expect(await ready.json()).toEqual({ status: 'ready' });
});
