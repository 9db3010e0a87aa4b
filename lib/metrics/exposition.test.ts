import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfigForTests } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { createTestDatabase, type TestDatabase } from '@/test/db';
import { PROMTOOL_MISSING, promtool, runPromtool } from '@/test/promtool';
import { startMetricsServer } from '@/worker/metrics-server';

/**
 * Both /metrics endpoints as Prometheus's own linter reads them: the worker's metrics server
 * (listening, scraped over HTTP) and the console's /api/metrics route handler.
 */

const token = 'exposition-token-0123456789';
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.METRICS_TOKEN = token;
  resetConfigForTests();
});
afterAll(async () => {
  delete process.env.METRICS_TOKEN;
  resetConfigForTests();
  const { getDb } = await import('@/db/client');
  await getDb().$client.end();
  await t.drop();
});

describe('promtool check metrics', () => {
  it.skipIf(!promtool)(`the worker's /metrics is clean (${PROMTOOL_MISSING})`, async () => {
    const server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      db: t.db,
      quarantineAfterMs: 15 * 60_000,
      logger: createLogger('exposition-test', 'silent'),
    });
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain('# TYPE notice_ledger_process_nodejs_active_handles gauge');
      expect(runPromtool(['check', 'metrics'], { input: text })).toEqual({ code: 0, output: '' });
    } finally {
      await server.close();
    }
  });

  it.skipIf(!promtool)(`the console's /api/metrics is clean (${PROMTOOL_MISSING})`, async () => {
    const { GET } = await import('@/app/api/metrics/route');
    const response = await GET(new Request('http://console.test/api/metrics', { headers: { authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('# TYPE notice_ledger_pending_jobs gauge');
    expect(runPromtool(['check', 'metrics'], { input: text })).toEqual({ code: 0, output: '' });
  });
});
