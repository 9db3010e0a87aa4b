import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { seedConsoleScenario } from '@/e2e/fixtures/console-data';

const token = 'metrics-token-0123456789';
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  await seedConsoleScenario(t.db, { secret: process.env.NOTICE_KEY_SECRET ?? '' });
});
afterAll(async () => {
  delete process.env.METRICS_TOKEN;
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
});

async function scrape(authorization?: string): Promise<Response> {
  const { GET } = await import('./route');
  return GET(new Request('http://console.test/api/metrics', { headers: authorization ? { authorization } : {} }));
}

describe('/api/metrics', () => {
  it('is off without METRICS_TOKEN', async () => {
    delete process.env.METRICS_TOKEN;
    expect((await scrape(`Bearer ${token}`)).status).toBe(404);
  });

  it('wants the bearer token, then serves Prometheus text with the database gauges', async () => {
    process.env.METRICS_TOKEN = token;
    expect((await scrape()).status).toBe(401);
    expect((await scrape('Bearer wrong-token-0123456789')).status).toBe(401);
    const response = await scrape(`Bearer ${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await response.text();
    expect(body).toMatch(/^notice_ledger_quarantined_claims 3$/m);
    expect(body).toContain('# TYPE notice_ledger_pending_jobs gauge');
    expect(body).toMatch(/^notice_ledger_pending_counted_age_seconds \d+(\.\d+)?$/m);
  });
});
