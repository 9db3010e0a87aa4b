import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { PROMTOOL_MISSING, promtool, runPromtool } from '@/testing/promtool';
import { scrapeConsoleMetrics, scrapeWorkerMetrics } from '@/testing/metrics-endpoints';

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
});
afterAll(async () => {
  delete process.env.METRICS_TOKEN;
  const { getDb } = await import('@/lib/process-db');
  await getDb().$client.end();
  await t.drop();
});

describe('promtool check metrics', () => {
  it.skipIf(!promtool)(`the worker's /metrics is clean (${PROMTOOL_MISSING})`, async () => {
    const text = await scrapeWorkerMetrics(t.db);
    expect(text).toContain('# TYPE notice_ledger_process_nodejs_active_handles gauge');
    // Read by the alert rules: the nearest deadline of a due job, and the worker's own objective.
    expect(text).toContain('# TYPE notice_ledger_due_pending_seconds_to_deadline gauge');
    expect(text).toContain('notice_ledger_objective_seconds{objective="claim_to_commit_p99"} 0.25');
    expect(runPromtool(['check', 'metrics'], { input: text })).toEqual({ code: 0, output: '' });
  });

  it.skipIf(!promtool)(`the console's /api/metrics is clean (${PROMTOOL_MISSING})`, async () => {
    const text = await scrapeConsoleMetrics(token);
    expect(text).toContain('# TYPE notice_ledger_pending_jobs gauge');
    expect(runPromtool(['check', 'metrics'], { input: text })).toEqual({ code: 0, output: '' });
  });
});
