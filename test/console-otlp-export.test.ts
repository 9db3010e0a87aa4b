import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiToken } from '@/lib/auth/api-tokens';
import { ensureProductionBuild } from '@/scripts/production-build';
import { startConsoleServer, type ConsoleServer } from '@/testing/console-server';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startOtlpCollector, type OtlpCollector } from '@/testing/otlp-collector';

/**
 * The console as users run it (`next start` over the production build) with
 * OTEL_EXPORTER_OTLP_ENDPOINT set exports the producer's request span. Next builds
 * instrumentation.ts and each route apart, so module state set at start-up is not seen by the
 * routes; this caught only Next's own spans before the installed flag moved to globalThis.
 */

let t: TestDatabase;
let collector: OtlpCollector;
let server: ConsoleServer;

beforeAll(async () => {
  await ensureProductionBuild({ root: path.resolve(import.meta.dirname, '..'), log: (line) => console.log(`console-otlp: ${line}`) });
  t = await createTestDatabase();
  collector = await startOtlpCollector();
  server = await startConsoleServer({
    env: {
      DATABASE_URL: t.url,
      NOTICE_KEY_SECRET: process.env.NOTICE_KEY_SECRET ?? '',
      NEXTAUTH_SECRET: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    },
  });
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await collector?.close();
  await t?.drop();
});

describe('OTLP/HTTP export from the console under next start', () => {
  it('exports producer.request → notice.schedule for a reminder, with the console service name and the job id', async () => {
    const { token } = await createApiToken(t.db, { name: 'otlp producer', createdBy: null, actor: 'test' });
    const now = Date.now();
    const response = await fetch(`${server.url}/api/v1/reminders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'payment_recovery',
        identity: { account_id: 'acct_otlp', reconciliation_id: 'rec_otlp', exception_id: 'exc_otlp' },
        recipient: { email: 'otlp@example.com', timeZone: 'UTC' },
        dueAt: new Date(now + 3_600_000).toISOString(),
        deadlineAt: new Date(now + 86_400_000).toISOString(),
        payload: { customer_name: 'Ada', amount: '12.00', currency: 'EUR', reference: 'otlp-ref' },
        source: 'otlp-test',
      }),
    });
    expect(response.status, server.logTail()).toBe(201);
    const { id: jobId } = (await response.json()) as { id: string };
    // The batch processor exports every 5 s.
    await vi.waitFor(
      () => {
        const names = collector.spans().map((span) => span.name);
        expect(names).toEqual(expect.arrayContaining(['producer.request', 'notice.schedule']));
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(collector.serviceNames()).toContain('notice-ledger-console');
    const scheduled = collector.spans().find((span) => span.name === 'notice.schedule');
    expect(scheduled?.attributes?.find((a) => a.key === 'notice.job_id')?.value.stringValue).toBe(jobId);
    // Never the recipient or a payload value.
    const exported = collector.received.map((request) => request.body).join('\n');
    for (const value of ['otlp@example.com', 'otlp-ref', 'Ada']) expect(exported).not.toContain(value);
  });
});
