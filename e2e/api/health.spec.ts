import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * The probes a load balancer or Kubernetes calls, through `next start` and without a session or
 * a token: liveness answers while the console serves; readiness names the migrations applied
 * against the ones this build ships (db/migrations/meta/_journal.json).
 */
test('GET /api/health and /api/ready answer an anonymous caller, ready with every shipped migration applied', async ({ request }) => {
  const health = await request.get('/api/health');
  expect(health.status()).toBe(200);
  expect(await health.json()).toEqual({ status: 'ok' });

  const journal = JSON.parse(readFileSync(path.join(process.cwd(), 'db/migrations/meta/_journal.json'), 'utf8')) as { entries: unknown[] };
  const ready = await request.get('/api/ready');
  expect(ready.status()).toBe(200);
  expect(await ready.json()).toMatchObject({
    status: 'ready',
    database: 'ok',
    migrations: { applied: journal.entries.length, expected: journal.entries.length },
  });
});
